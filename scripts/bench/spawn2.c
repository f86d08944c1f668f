/* SPDX-License-Identifier: Apache-2.0
 * spawn2.c - baseline for scripts/bench_launch: start two processes with fork + execvp and
 * wait for both, with no shell in between. This is the least any launcher of 2 workers must
 * do, so `accel launch`'s overhead is measured against it.
 * Usage: spawn2 [PROGRAM [ARGS...]]   (default: true). Exit 0 when both children exited 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  char* default_argv[] = {"true", NULL};
  char** child_argv = argc > 1 ? argv + 1 : default_argv;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("spawn2: fork");
      return 1;
    }
    if (pid == 0) {
      execvp(child_argv[0], child_argv);
      perror("spawn2: exec");
      _exit(127);
    }
  }
  int failed = 0, status;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return failed;
}
