// SPDX-License-Identifier: Apache-2.0
// accel-fashion-mnist: the Accelerate tutorials' training loop in C++ over libtorch. Trains
// FashionCnn on Fashion-MNIST (Debian's dataset-fashion-mnist) data-parallel under
// `accel launch`, prints progress and the test accuracy on the main process, checkpoints and
// resumes (--checkpoint_dir), logs to the trackers of --log_with.
// Exit: 0 trained; 1 failure; 2 usage, or the dataset missing.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <torch/torch.h>
#include <CLI/CLI.hpp>

#include "apps/fashion_mnist/cnn.h"
#include "apps/fashion_mnist/fashion_data.h"
#include "lib/common/error.h"
#include "runtime/torch/torch_accelerator.h"

namespace {

struct Args {
  int epochs = 1;
  size_t batch_size = 64;
  double lr = 0.05;
  uint64_t seed = 0;
  std::string data_dir = accel::fashion::kFashionMnistSourceDir;
  std::string cache_dir = accel::fashion::defaultFashionMnistCache();
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  std::string log_with, project_dir = ".";
  int64_t log_every = 100;
};

// Every rank's share of the test set, gathered without the sampler's padding: the accuracy over
// exactly the test set.
double testAccuracy(accel::TorchAccelerator& acc, accel::fashion::FashionCnn& model,
                    const accel::fashion::FashionMnist& test) {
  torch::NoGradGuard no_grad;
  model->eval();
  accel::DistributedSampler sampler(static_cast<size_t>(test.size()), acc.numProcesses(), acc.processIndex(),
                                    {.shuffle = false});
  accel::TensorLoader loader(test.images, test.labels, 1000, sampler, acc.device());
  int64_t correct = 0, seen = 0;
  while (auto batch = loader.next()) {
    const auto hits = model->forward(batch->input).argmax(1).eq(batch->target).to(torch::kLong);
    const auto all = acc.gatherForMetrics(hits, loader);
    correct += all.sum().item<int64_t>();
    seen += all.size(0);
  }
  model->train();
  return static_cast<double>(correct) / static_cast<double>(seen);
}

int train(const Args& args) {
  accel::TorchAcceleratorOptions options;
  options.sampler = {.shuffle = true, .seed = args.seed, .drop_last = false};
  options.log_with = args.log_with;
  options.project_dir = args.project_dir;
  accel::TorchAccelerator acc(options);
  torch::set_num_threads(1);
  std::string data;
  acc.base().mainProcessFirst([&] { data = accel::fashion::prepareFashionMnist(args.data_dir, args.cache_dir); });
  const auto train_set = accel::fashion::loadFashionMnist(data, true);
  const auto test_set = accel::fashion::loadFashionMnist(data, false);
  torch::manual_seed(args.seed);
  auto model = acc.prepare(accel::fashion::FashionCnn());
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(args.lr).momentum(0.9));
  auto optimizer = acc.prepareOptimizer(sgd);
  accel::TensorLoader& loader = acc.prepare(train_set.images, train_set.labels, args.batch_size);
  acc.initTrackers("fashion-mnist", {{"lr", args.lr},
                                     {"batch_size", static_cast<double>(args.batch_size)},
                                     {"processes", static_cast<double>(acc.numProcesses())}});
  int64_t step = 0;
  if (!args.checkpoint_dir.empty()) {
    if (auto resumed = acc.loadState(args.checkpoint_dir)) {
      step = *resumed;
      acc.print(fmt::format("resumed from {} at step {}", args.checkpoint_dir, step));
    }
  }
  const int64_t per_epoch = static_cast<int64_t>(loader.batchesPerEpoch());
  acc.print(fmt::format("training FashionCnn on {} images: {} process(es), {} steps per epoch, batch {} per process",
                        train_set.size(), acc.numProcesses(), per_epoch, args.batch_size));
  for (int64_t epoch = loader.sampler().epoch(); epoch < args.epochs; loader.setEpoch(++epoch)) {
    while (auto batch = loader.next()) {
      auto scope = acc.accumulate();
      torch::Tensor loss;
      {
        auto autocast = acc.autocast();
        loss = torch::nn::functional::cross_entropy(model(batch->input), batch->target);
      }
      acc.backward(loss);
      optimizer.step();
      optimizer.zeroGrad();
      ++step;
      if (step % args.log_every == 0 || loader.atEnd()) {
        const double value = loss.item<double>();
        acc.print(
            fmt::format("epoch {} step {}/{} loss {:.4f}", epoch + 1, step - epoch * per_epoch, per_epoch, value));
        acc.log({{"loss", value}}, step);
      }
      if (args.checkpoint_every && step % args.checkpoint_every == 0) acc.saveState(args.checkpoint_dir, step);
    }
  }
  const double accuracy = testAccuracy(acc, model.module(), test_set);
  acc.log({{"test_accuracy", accuracy}}, step);
  acc.print(fmt::format("test accuracy: {:.2f} % ({} test images)", 100 * accuracy, test_set.size()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"Trains a CNN on Fashion-MNIST with accel's Accelerator for libtorch (run under `accel launch`)"};
  app.add_option("--epochs", args.epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--batch_size", args.batch_size, "samples per process and step")->check(CLI::PositiveNumber);
  app.add_option("--lr", args.lr, "SGD learning rate (momentum 0.9)");
  app.add_option("--seed", args.seed, "initial weights and shuffling");
  app.add_option("--data_dir", args.data_dir, "the gzip IDX files (dataset-fashion-mnist)");
  app.add_option("--cache_dir", args.cache_dir, "where they are decompressed once");
  app.add_option("--checkpoint_dir", args.checkpoint_dir, "save_state/load_state directory (resumes from it)");
  app.add_option("--checkpoint_every", args.checkpoint_every, "steps between checkpoints (0: none)");
  app.add_option("--log_with", args.log_with, "trackers: jsonl, tensorboard, all");
  app.add_option("--project_dir", args.project_dir, "where trackers write");
  app.add_option("--log_every", args.log_every, "steps between progress lines")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (args.checkpoint_every && args.checkpoint_dir.empty()) {
    std::cerr << "accel-fashion-mnist: error: --checkpoint_every needs --checkpoint_dir\n";
    return 2;
  }
  try {
    return train(args);
  } catch (const accel::Error& e) {
    std::cerr << "accel-fashion-mnist: error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << "  hint: " << e.hint() << "\n";
    return static_cast<int>(e.status());
  } catch (const std::exception& e) {
    std::cerr << "accel-fashion-mnist: error: " << e.what() << "\n";
    return 1;
  }
}
