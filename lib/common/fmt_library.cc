// SPDX-License-Identifier: Apache-2.0
// fmt's compiled half, built once into accel_fmt (lib/CMakeLists.txt) instead of in every file
// that formats (header-only fmt compiles it again in each) or loaded from libfmt.so (one shared
// library more to map at every `accel launch`). The definitions are fmt's own (<fmt/format-inl.h>);
// the instantiations are the ones <fmt/format.h> declares `extern` without FMT_HEADER_ONLY, and
// those the rest of fmt's headers call into, for char and wchar_t as libfmt.so carries them.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
