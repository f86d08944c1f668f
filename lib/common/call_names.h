// SPDX-License-Identifier: Apache-2.0
// The names of a collective's kind, element type and reduce operation, and its description
// ("all_reduce (f32 x 1000) sum"), by their numeric codes: the runtime's enums
// (runtime/comm/collective_call.h, types.h) take their values from these tables, and the launcher
// reads the same codes from a rank's flight recorder (flight_ring.h) without the runtime.
// A code out of range is named "?". Pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace accel::calls {

// In the order of the runtime's CallKind, DataType and ReduceOp values.
inline constexpr const char* kKindNames[] = {"all_reduce", "broadcast", "all_gather", "all_gather_v", "reduce_scatter",
                                             "gather",     "scatter",   "all_to_all", "all_to_all_v", "barrier"};
inline constexpr const char* kDtypeNames[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8"};
inline constexpr const char* kReduceOpNames[] = {"sum", "avg", "min", "max", "product"};
// torch's names of the same element types (its flight recorder's input_dtypes).
inline constexpr const char* kTorchDtypeNames[] = {"Float", "Double", "Half", "BFloat16", "Int", "Long", "Byte"};
// A collective of another recorder's that none of ours names (its name goes with it).
inline constexpr unsigned kForeignKind = 255;

const char* kindName(unsigned kind);
const char* dtypeName(unsigned dtype);
const char* reduceOpName(unsigned op);

// "all_reduce (f32 x 1000) sum", "broadcast (i64 x 1) from rank 0", "all_to_all_v (f32)", "barrier".
std::string describeCall(unsigned kind, unsigned dtype, uint64_t count, unsigned op, int root);

}  // namespace accel::calls
