// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/gloo/gloo_backend.h"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/gloo/gloo_sockets.h"
#include "runtime/comm/reduce_ops.h"

namespace accel::comm::gloo {

namespace {

// When every rank still waiting in an operation has published its call (op_queue.h: the watch
// probes after a second, and looks every half second).
constexpr auto kLookedAt = std::chrono::milliseconds(1500);

// Gloo's rendezvous speaks to accel's Store.
class StoreAdapter : public ::gloo::rendezvous::Store {
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

void runAllReduce(const std::shared_ptr<::gloo::rendezvous::Context>& ctx, const std::vector<int>& sockets, Tensor t,
                  ReduceOp op, uint32_t tag, std::chrono::milliseconds timeout) {
  withWidth(t.dtype, [&](auto* typed) {
    using S = std::remove_pointer_t<decltype(typed)>;
    ::gloo::AllreduceOptions o(ctx);
    o.setOutput(static_cast<S*>(t.data), t.count);
    o.setReduceFunction(reduceFunction(t.dtype, op));
    o.setTag(tag);
    o.setTimeout(timeout);
    runGuarded(*ctx, sockets, [&] { ::gloo::allreduce(o); });
  });
  if (op == ReduceOp::Avg) finishAverage(t, ctx->size);
}

}  // namespace

GlooBackend::GlooBackend(Store& store, int rank, int size, GlooOptions options)
    : rank_(rank), size_(size), options_(std::move(options)) {
  ::gloo::transport::tcp::attr attr;
  if (options_.iface.empty()) {
    attr.hostname = options_.hostname;
  } else {
    attr.iface = options_.iface;
  }
  try {
    auto device = ::gloo::transport::tcp::CreateDevice(attr);
    context_ = std::make_shared<::gloo::rendezvous::Context>(rank, size);
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
      [this](const CollectiveCall& call) {
        if (watch_->probe(call).empty()) return false;
        abortRunning();  // the ranks' calls differ: end the operation here and at the peers
        return true;
      },
      [this](const CollectiveCall& call) {
        timed_out_.store(call.seq);
        abortRunning();  // its time is up: end it here, and at the peers, who hear at once
      },
      options_.timeout);
  queue_->setLabel(
      fmt::format("gloo rank {} of {}{}", name, size_, options_.part.empty() ? "" : " (" + options_.part + ")"));
  if (options_.part.empty()) queue_->recordFlights(size_, rank_);
}

GlooBackend::~GlooBackend() {
  queue_.reset();  // its threads gone (the watch may shut the sockets down), then the duplicates
  for (int fd : sockets_) ::close(fd);
}

// Each operation's Gloo tag is its call's fingerprint: ranks that made different calls never
// exchange bytes (they wait on different tags until the watch names them), and consecutive
// operations still get distinct tags.
WorkPtr GlooBackend::enqueue(const CollectiveCall& call, std::function<void(uint32_t)> run) {
  return queue_->submit(call, [this, run = std::move(run)](const CollectiveCall& numbered) {
    const uint64_t f = numbered.fingerprint();
    try {
      run(static_cast<uint32_t>(f ^ (f >> 32)));
    } catch (const std::exception&) {
      if (timed_out_.load() != numbered.seq) throw;
      throw CommError(
          fmt::format("timed out after {:g} s waiting for its peers (time this process was stopped, as "
                      "by Ctrl-Z, not counted)",
                      defaults::seconds(options_.timeout)));
    }
  });
}

// Ends the running operation with an error at once, here and at the peers.
void GlooBackend::abortRunning() { shutdownSockets(sockets_); }

Backend::Memory GlooBackend::memory() const {
  return {DeviceType::CPU, "Gloo collectives", "use the NCCL backend for GPU tensors"};
}

// Peers waiting for this rank learn at once from its closed connections.
void GlooBackend::abandon() { abortRunning(); }

WorkPtr GlooBackend::startAllReduce(const CollectiveCall& call, Tensor t) {
  return enqueue(call,
                 [this, t, op = call.op](uint32_t tag) { runAllReduce(context_, sockets_, t, op, tag, wait_limit_); });
}

WorkPtr GlooBackend::startBroadcast(const CollectiveCall& call, Tensor t) {
  return enqueue(call, [this, t, root = call.root](uint32_t tag) {
    withWidth(t.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::BroadcastOptions o(context_);
      o.setOutput(static_cast<S*>(t.data), t.count);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::broadcast(o); });
    });
  });
}

WorkPtr GlooBackend::startAllGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return enqueue(call, [this, in, out](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::AllgatherOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      o.setOutput(static_cast<S*>(out.data), out.count);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::allgather(o); });
    });
  });
}

WorkPtr GlooBackend::startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                                     const std::vector<size_t>& counts) {
  return enqueue(call, [this, in, out, counts](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::AllgathervOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      o.setOutput(static_cast<S*>(out.data), counts);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::allgatherv(o); });
    });
  });
}

// Gloo's options API has no reduce-scatter: all-reduce a copy, keep this rank's chunk.
WorkPtr GlooBackend::startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return enqueue(call, [this, in, out, op = call.op](uint32_t tag) {
    std::vector<uint8_t> scratch(static_cast<const uint8_t*>(in.data),
                                 static_cast<const uint8_t*>(in.data) + in.bytes());
    Tensor all = in;
    all.data = scratch.data();
    runAllReduce(context_, sockets_, all, op, tag, wait_limit_);
    std::memcpy(out.data, scratch.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr GlooBackend::startGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return enqueue(call, [this, in, out, root = call.root](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::GatherOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      if (rank_ == root) o.setOutput(static_cast<S*>(out.data), in.count * static_cast<size_t>(size_));
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::gather(o); });
    });
  });
}

WorkPtr GlooBackend::startScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return enqueue(call, [this, in, out, root = call.root](uint32_t tag) {
    withWidth(out.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::ScatterOptions o(context_);
      if (rank_ == root) {
        std::vector<S*> chunks;
        for (int r = 0; r < size_; ++r)
          chunks.push_back(static_cast<S*>(in.slice(static_cast<size_t>(r) * out.count, out.count).data));
        o.setInputs(chunks, out.count);
      }
      o.setOutput(static_cast<S*>(out.data), out.count);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::scatter(o); });
    });
  });
}

// Gloo's all-to-all takes equal chunks, its all-to-all-v a count per rank in its own width.
WorkPtr GlooBackend::startAllToAll(const CollectiveCall& call, Tensor in, Tensor out) {
  return enqueue(call, [this, in, out](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::AlltoallOptions o(context_);
      o.setInput(static_cast<S*>(in.data), in.count);
      o.setOutput(static_cast<S*>(out.data), out.count);
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::alltoall(o); });
    });
  });
}

WorkPtr GlooBackend::startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out,
                                    const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) {
  return enqueue(call, [this, in, out, send_counts, recv_counts](uint32_t tag) {
    withWidth(in.dtype, [&](auto* typed) {
      using S = std::remove_pointer_t<decltype(typed)>;
      ::gloo::AlltoallvOptions o(context_);
      o.setInput(static_cast<S*>(in.data), std::vector<int64_t>(send_counts.begin(), send_counts.end()));
      o.setOutput(static_cast<S*>(out.data), std::vector<int64_t>(recv_counts.begin(), recv_counts.end()));
      o.setTag(tag);
      o.setTimeout(wait_limit_);
      runGuarded(*context_, sockets_, [&] { ::gloo::alltoallv(o); });
    });
  });
}

WorkPtr GlooBackend::startBarrier(const CollectiveCall& call) {
  return enqueue(call, [this](uint32_t tag) {
    ::gloo::BarrierOptions o(context_);
    o.setTag(tag);
    o.setTimeout(wait_limit_);
    runGuarded(*context_, sockets_, [&] { ::gloo::barrier(o); });
  });
}

}  // namespace accel::comm::gloo
