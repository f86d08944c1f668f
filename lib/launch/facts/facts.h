// SPDX-License-Identifier: Apache-2.0
// What a launch knows of the world it runs in, gathered before it plans: this machine (its GPUs,
// CPUs, name, environment), the network as this machine sees it, and the programs it would run
// (an MPI's mpirun). Settings are resolved and plans built over a Facts, never over the system
// itself, so tests give them fake facts (tests/support/fake_facts.h) and build the plan of any
// machine in milliseconds. system_facts.h gathers the real ones.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lib/common/socket.h"
#include "lib/launch/facts/cpu_topology.h"

namespace accel::launch::facts {

// A visible GPU as the launch needs it.
struct Gpu {
  std::string name;        // "NVIDIA GeForce RTX 4090"
  std::string pci_bus_id;  // "00000000:18:00.0"; empty when unknown (libcuda answered, not NVML)
};

// This machine, read once.
struct Machine {
  int visible_gpus = 0;        // after CUDA_VISIBLE_DEVICES
  int physical_gpus = 0;       // in the machine
  std::string gpu_note;        // why there are none, for messages
  std::vector<Gpu> gpus;       // the visible ones, in CUDA order
  std::string driver_version;  // "550.54.15"; empty when unknown
  int physical_cores = 1;
  std::vector<int> usable_cpus;  // the launcher's CPU affinity, ascending
  std::string hostname;
  std::map<std::string, std::string> env;  // the launcher's environment; PWD is its real working directory
  std::string random_hex;                  // fresh randomness for run ids and folder names (shown)
  std::string start_stamp;                 // the launch's local start time, YYYYmmddHHMMSS (DeepSpeed's log names)
  std::string token_hex;                   // fresh randomness of its own for tokens (never shown)
  bool default_config_exists = false;      // Accelerate's default config file exists (--cpu skips it)
  bool stdin_terminal = false;             // the launcher's stdin is a terminal
  bool as_root = false;                    // Open MPI refuses root unless told otherwise
  std::string self;                        // this accel's absolute path (a hostfile head runs it)

  // The launcher's variable `name`, or "" when unset.
  std::string variable(const std::string& name) const;
};

// The network as this machine sees it. Implementations answer each question once and keep the
// answer, so that a launch and its rounds see one network.
class Network {
 public:
  virtual ~Network() = default;
  // The IPv4 address `host` resolves to, or "" when it does not resolve.
  virtual std::string resolve(const std::string& host) const = 0;
  // This machine's interface that holds IPv4 `address` ("eth0"), or "" when none does.
  virtual std::string interfaceOf(const std::string& address) const = 0;
  // How this machine reaches `peer`: its address there and the interface holding it ("" for no route).
  virtual net::Route routeTowards(const std::string& peer) const = 0;
  // This machine's addresses other machines may reach ("eth0 10.0.0.1"), loopback left out.
  virtual std::vector<std::string> ownAddresses() const = 0;
  // Whether a listening socket could bind `port` now; who holds it when not ("pid 12 (python3)", or "").
  virtual bool portIsFree(int port) const = 0;
  virtual std::string portHolder(int port) const = 0;
  // A free port for rank 0's store (facts/port.h says how it is chosen).
  virtual int freePort() const = 0;

  // Whether `host` resolves to one of this machine's addresses (loopback included).
  bool namesThisMachine(const std::string& host) const;
};

// An MPI's mpirun, found on PATH and asked which MPI it is.
struct Mpi {
  std::string path;
  bool open_mpi = true;  // Open MPI's argument names; else Hydra's (MPICH, MVAPICH, Intel MPI)
  std::string version;   // what `path --version` printed
};

// The programs a launch may run besides the workers' own.
class Programs {
 public:
  virtual ~Programs() = default;
  // The mpirun of DeepSpeed's MPI launcher `family` (openmpi, mpich, mvapich, impi), or, for
  // "" (Accelerate's --mpirun_hostfile), the first mpirun or mpiexec on PATH whatever its MPI.
  // Throws UsageError naming what to install.
  virtual Mpi mpirun(const std::string& family) const = 0;
};

struct Facts {
  Machine machine;
  const Network* network = nullptr;
  const Programs* programs = nullptr;
  // The program the command line names, as this machine resolves it (facts/program.h): what
  // each worker execs. Empty where this launcher runs no workers (a hostfile head).
  std::vector<std::string> program;
  // Where a DeepSpeed MPI launcher's hostfile was written (the selection in that MPI's format),
  // or "": the launch writes it before it plans, so that the plan names it.
  std::string mpi_hostfile;
  // Where the CPUs, memory and GPUs sit (cpu_topology.h), read when a binding asks.
  std::function<CpuTopology()> cpu_topology;
};

}  // namespace accel::launch::facts
