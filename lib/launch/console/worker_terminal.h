// SPDX-License-Identifier: Apache-2.0
// Pseudo-terminals for worker streams that the user sees on a terminal: the worker finds
// isatty() true (colours, line-buffered print, a progress bar's width) as it would under
// torchrun, while the launcher still reads every byte and prefixes it. The slave side does not
// turn "\n" into "\r\n" (the console draws lines itself) and echoes what the launcher writes
// into the master (a debugger's input: terminal_input.h).
#pragma once

namespace accel::launch::console {

struct Pty {
  int master = -1;  // the launcher's side: non-blocking, close-on-exec
  int slave = -1;   // the worker's side: close-on-exec (dup2 into the worker clears that)
};

// Opens a pseudo-terminal of `columns` x `rows`. Throws Error naming the failed call.
Pty openPty(int columns, int rows);

// Tells the worker's side its new size (the kernel signals SIGWINCH to its foreground group).
void setPtySize(int master, int columns, int rows);

}  // namespace accel::launch::console
