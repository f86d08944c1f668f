// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/gloo_backend.h"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>

#include "lib/common/socket.h"
#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/reduce_ops.h"

namespace accel {

namespace {

// When every rank still waiting in an operation has published its call (op_queue.h: the watch
// probes after a second, and looks every half second).
constexpr auto kLookedAt = std::chrono::milliseconds(1500);

// Gloo's rendezvous speaks to accel's Store.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(accel::Store& store) : store_(store) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes b = store_.get(key);
    return {b.begin(), b.end()};
  }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  accel::Store& store_;
};

// Calls f with a pointer type whose size is the element size: Gloo only needs the width.
template <typename F> void withWidth(DataType t, F&& f) {
  switch (dtypeSize(t)) {
    case 1: return f(static_cast<uint8_t*>(nullptr));
    case 2: return f(static_cast<uint16_t*>(nullptr));
    case 4: return f(static_cast<uint32_t*>(nullptr));
    default: return f(static_cast<uint64_t*>(nullptr));
  }
}

// Runs one Gloo collective whose options `o` the caller declared before this call, so they
// outlive it. Why: after an error Gloo's I/O thread may still signal the failed operation's
// UnboundBuffers (once from each pair that had something pending on them) while this thread is
// already unwinding. It touches a buffer only while holding that pair's mutex, and Pair::close()
// takes the same mutex: closing every pair before `o` dies orders the I/O thread's last touch
// before the buffers' destruction, and takes the pairs off the event loop, so nothing is written
// into the caller's memory after its Work has failed. Gloo's own guard (a spin on
// weak_ptr::expired(), a relaxed load) orders nothing, which is what ThreadSanitizer reported.
// The group is broken after a failure anyway; closed pairs also fail the peers' pending
// operations at once instead of at their timeout.
void closePairs(gloo::Context& ctx) {
  for (int r = 0; r < ctx.size; ++r) {
    if (r == ctx.rank) continue;
    try {
      if (auto& pair = ctx.getPair(r)) pair->close();
    } catch (...) {
      // A pair that cannot be closed is one Gloo never connected: nothing to order against.
    }
  }
}

// `sockets`: this group's duplicates of Gloo's sockets (GlooBackend::sockets_). While they exist
// Gloo's close() no longer ends a connection, so they are shut down with the pairs.
template <typename Run> void runGuarded(gloo::Context& ctx, const std::vector<int>& sockets, Run&& run) {
  try {
    run();
  } catch (...) {
    closePairs(ctx);
    net::shutdownSockets(sockets);
    throw;
  }
}

void runAllReduce(const std::shared_ptr<gloo::rendezvous::Context>& ctx, const std::vector<int>& sockets, Tensor t,
                  ReduceOp op, uint32_t tag, std::chrono::milliseconds timeout) {
  withWidth(t.dtype, [&](auto* typed) {
    using S = std::remove_pointer_t<decltype(typed)>;
    gloo::AllreduceOptions o(ctx);
    o.setOutput(static_cast<S*>(t.data), t.count);
    o.setReduceFunction(reduceFunction(t.dtype, op));
    o.setTag(tag);
    o.setTimeout(timeout);
    runGuarded(*ctx, sockets, [&] { gloo::allreduce(o); });
  });
  if (op == ReduceOp::Avg) finishAverage(t, ctx->size);
}

// Gloo's sockets, duplicated once they are connected (before any operation, so no descriptor
// is closed meanwhile): Pair::close() fails only the peers' pending operations, this rank's own
// pending receive waits out its timeout, and Gloo keeps the descriptors to itself. A shutdown()
// of the duplicates instead makes the pairs' I/O thread read end-of-file on both sides, which
// fails every pending operation at once. Shutting down the sockets this rank accepted reaches
// every connection once each rank that learns the verdict does the same.
std::vector<int> glooSockets(gloo::Context& ctx) {
  std::vector<std::string> mine;
  for (int r = 0; r < ctx.size; ++r) {
    if (r == ctx.rank) continue;
    try {
      if (const auto& pair = ctx.getPair(r)) {
        if (const auto* address = dynamic_cast<const gloo::transport::tcp::Address*>(&pair->address())) {
          mine.push_back(net::endpointText(&address->getSockaddr()));
        }
      }
    } catch (...) {
      // Never connected: nothing to end.
    }
  }
  return net::dupSocketsAt(mine);
}

}  // namespace

GlooBackend::GlooBackend(Store& store, int rank, int size, GlooOptions options)
    : rank_(rank), size_(size), options_(std::move(options)) {
  gloo::transport::tcp::attr attr;
  if (options_.iface.empty()) {
    attr.hostname = options_.hostname;
  } else {
    attr.iface = options_.iface;
  }
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context_->setTimeout(options_.timeout);
    StoreAdapter adapter(store);
    context_->connectFullMesh(adapter, device);
  } catch (const StoreTimeout&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError(fmt::format("gloo: rank {} of {} could not connect to its peers: {}", rank, size, e.what()),
                    "check that every rank can reach the others (GLOO_SOCKET_IFNAME selects the interface)");
  }
  sockets_ = glooSockets(*context_);
  watch_ = std::make_unique<CallWatch>(store, rank_, size_, options_.names);
  const int name = options_.names.empty() ? rank_ : options_.names[static_cast<size_t>(rank_)];
  queue_ = std::make_unique<OpQueue>(
      groupFailureText(
          name, size_, options_.diagnose,
          [this](const CollectiveCall& call, const std::exception&, std::chrono::steady_clock::duration waited) {
            // Who did not arrive is known once every waiting rank published its call
            // (CallWatch::probe, after a second): a quicker failure has other causes.
            return waited >= kLookedAt ? watch_->lookBack(call.seq) : Findings{watch_->verdict(), {}};
          },
          options_.part),
      OpQueue::Watch{watch_.get(), [this] { abortRunning(); }});
}

GlooBackend::~GlooBackend() {
  queue_.reset();  // its threads gone (the watch may shut the sockets down), then the duplicates
  for (int fd : sockets_) ::close(fd);
}

// Each operation's Gloo tag is its call's fingerprint: ranks that made different calls never
// exchange bytes (they wait on different tags until the watch names them), and consecutive
// operations still get distinct tags.
WorkPtr GlooBackend::enqueue(const CollectiveCall& call, std::function<void(uint32_t)> run) {
  return queue_->submit(call, [run = std::move(run)](const CollectiveCall& numbered) {
    const uint64_t f = numbered.fingerprint();
    run(static_cast<uint32_t>(f ^ (f >> 32)));
  });
}

// Ends the running operation with an error at once, here and at the peers.
void GlooBackend::abortRunning() { net::shutdownSockets(sockets_); }

void GlooBackend::checkCpu(const Tensor& t, const char* op) const { checkCpuMemory(t, op, "Gloo collectives"); }

WorkPtr GlooBackend::allReduce(Tensor t, ReduceOp op) {
  checkCpu(t, "all_reduce");
  const auto call = CollectiveCall::reduction(CallKind::AllReduce, t, op);
  if (size_ == 1 || t.count == 0) return completedWork(call.describe());
  return enqueue(call, [this, t, op](uint32_t tag) { runAllReduce(context_, sockets_, t, op, tag, options_.timeout); });
}

WorkPtr GlooBackend::broadcast(Tensor t, int root) {
  checkCpu(t, "broadcast");
  const auto call = CollectiveCall::rooted(CallKind::Broadcast, t, root);
  if (size_ == 1 || t.count == 0) return completedWork(call.describe());
  return enqueue(call, [this, t, root](uint32_t tag) {
    withWidth(t.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      gloo::BroadcastOptions o(context_);
      o.setOutput(static_cast<S*>(t.data), t.count);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(options_.timeout);
      runGuarded(*context_, sockets_, [&] { gloo::broadcast(o); });
    });
  });
}

WorkPtr GlooBackend::allGather(Tensor in, Tensor out) {
  checkCpu(in, "all_gather");
  checkCpu(out, "all_gather");
  checkAllGather(in, out, size_);
  const auto call = CollectiveCall::of(CallKind::AllGather, in.dtype, in.count);
  if (size_ == 1 || in.count == 0) return copiedLocally(in, out, in.bytes(), call.describe());
  return enqueue(call, [this, in, out](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      gloo::AllgatherOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      o.setOutput(static_cast<S*>(out.data), out.count);
      o.setTag(tag);
      o.setTimeout(options_.timeout);
      runGuarded(*context_, sockets_, [&] { gloo::allgather(o); });
    });
  });
}

WorkPtr GlooBackend::allGatherV(Tensor in, Tensor out, std::vector<size_t> counts) {
  checkCpu(in, "all_gather_v");
  const size_t total = checkAllGatherV(in, out, counts, size_, rank_);
  const auto call = CollectiveCall::of(CallKind::AllGatherV, in.dtype, total);
  if (size_ == 1 || total == 0) return copiedLocally(in, out, in.bytes(), call.describe());
  return enqueue(call, [this, in, out, counts](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      gloo::AllgathervOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      o.setOutput(static_cast<S*>(out.data), counts);
      o.setTag(tag);
      o.setTimeout(options_.timeout);
      runGuarded(*context_, sockets_, [&] { gloo::allgatherv(o); });
    });
  });
}

// Gloo's options API has no reduce-scatter: all-reduce a copy, keep this rank's chunk.
WorkPtr GlooBackend::reduceScatter(Tensor in, Tensor out, ReduceOp op) {
  checkCpu(in, "reduce_scatter");
  checkReduceScatter(in, out, size_);
  const auto call = CollectiveCall::reduction(CallKind::ReduceScatter, out, op);
  if (out.count == 0) return completedWork(call.describe());
  if (size_ == 1) return copiedLocally(in, out, out.bytes(), call.describe());
  return enqueue(call, [this, in, out, op](uint32_t tag) {
    std::vector<uint8_t> scratch(static_cast<const uint8_t*>(in.data),
                                 static_cast<const uint8_t*>(in.data) + in.bytes());
    Tensor all = in;
    all.data = scratch.data();
    runAllReduce(context_, sockets_, all, op, tag, options_.timeout);
    std::memcpy(out.data, scratch.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr GlooBackend::gather(Tensor in, Tensor out, int root) {
  checkCpu(in, "gather");
  checkRooted("gather", out, in.count, size_, rank_, root);
  const auto call = CollectiveCall::rooted(CallKind::Gather, in, root);
  if (size_ == 1 || in.count == 0) return copiedLocally(in, out, in.bytes(), call.describe());
  return enqueue(call, [this, in, out, root](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      gloo::GatherOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      if (rank_ == root) o.setOutput(static_cast<S*>(out.data), in.count * static_cast<size_t>(size_));
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(options_.timeout);
      runGuarded(*context_, sockets_, [&] { gloo::gather(o); });
    });
  });
}

WorkPtr GlooBackend::scatter(Tensor in, Tensor out, int root) {
  checkCpu(out, "scatter");
  checkRooted("scatter", in, out.count, size_, rank_, root);
  const auto call = CollectiveCall::rooted(CallKind::Scatter, out, root);
  if (size_ == 1 || out.count == 0) return copiedLocally(in, out, out.bytes(), call.describe());
  return enqueue(call, [this, in, out, root](uint32_t tag) {
    withWidth(out.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      gloo::ScatterOptions o(context_);
      if (rank_ == root) {
        std::vector<S*> chunks;
        for (int r = 0; r < size_; ++r)
          chunks.push_back(static_cast<S*>(in.slice(static_cast<size_t>(r) * out.count, out.count).data));
        o.setInputs(chunks, out.count);
      }
      o.setOutput(static_cast<S*>(out.data), out.count);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(options_.timeout);
      runGuarded(*context_, sockets_, [&] { gloo::scatter(o); });
    });
  });
}

WorkPtr GlooBackend::barrier() {
  if (size_ == 1) return completedWork("barrier");
  return enqueue(CollectiveCall{}, [this](uint32_t tag) {
    gloo::BarrierOptions o(context_);
    o.setTag(tag);
    o.setTimeout(options_.timeout);
    runGuarded(*context_, sockets_, [&] { gloo::barrier(o); });
  });
}

}  // namespace accel
