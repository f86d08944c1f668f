#!/usr/bin/env python3
"""Shell completion and the manual page (CTest `completion`): the scripts of `accel completion`
typed into under tmux, in bash with the bash-completion package and without it, and in zsh:
`accel la<TAB>` gives `launch`, `accel launch --mix<TAB>` gives `--mixed_precision`, and
`--mixed_precision <TAB>` lists `no fp16 bf16 fp8`; in fish `complete -C 'accel launch --mix'`
gives `--mixed_precision`. Every launch and torchrun flag of `accel launch --help` and `accel
torchrun --help`, in both spellings, is in every script and in the manual page, which groff
renders without a warning. Another shell's name is exit 2 listing the shells.
Each check prints PASS or FAIL; exits 1 on any failure, 77 when a shell is missing outside CI.
Usage: completion_test.py ACCEL"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tmux_support import ACCEL, Tmux, check, unavailable, failures

TOOLS = ["tmux", "zsh", "fish", "groff"]
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


def run(*args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)


def flag_spellings():
    """Every spelling --help shows for launch and torchrun, with its other spelling."""
    names = set()
    for command in ("launch", "torchrun"):
        text = run(ACCEL, command, "--help").stdout
        for name in re.findall(r"^  (?:-\w, )?--([a-z0-9_]+)", text, re.M):
            names.update({"--" + name, "--" + name.replace("_", "-")})
    return names


def typed(t, session, text, want, what):
    """Types `text` and a Tab (no Enter), then waits until a line of the screen holds `want`."""
    t.tmux("send-keys", "-t", session, "-l", "--", text)
    t.tmux("send-keys", "-t", session, "Tab")
    return t.wait(session, lambda s: any(want in line for line in s), what, seconds=10)


def start_shell(t, session, command, setup):
    r = t.tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "30", "-c", t.tmp, command)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode(errors="replace"))
    t.tmux("send-keys", "-t", session, "-l", setup + "; clear; echo READY")
    t.tmux("send-keys", "-t", session, "Enter")
    return t.wait(session, lambda s: "READY" in s, f"{session}: the shell starts", seconds=20)


def interactive(t, session, command, setup):
    if not start_shell(t, session, command, setup):
        return
    if typed(t, session, "accel la", "$ accel launch", f"{session}: accel la<TAB> gives launch"):
        check(f"{session}: accel la<TAB> gives launch", True)
    if typed(t, session, "--mix", "accel launch --mixed_precision",
             f"{session}: accel launch --mix<TAB> gives --mixed_precision"):
        check(f"{session}: accel launch --mix<TAB> gives --mixed_precision", True)
    t.tmux("send-keys", "-t", session, "Tab", "Tab")
    screen = t.wait(session, lambda s: all(re.search(rf"(^|\s){v}(\s|$)", "\n".join(s)) for v in ("no", "fp16",
                                                                                                 "bf16", "fp8")),
                    f"{session}: --mixed_precision <TAB> lists no fp16 bf16 fp8", seconds=10)
    if screen:
        check(f"{session}: --mixed_precision <TAB> lists no fp16 bf16 fp8", True)
    t.tmux("send-keys", "-t", session, "C-c")


def main():
    for tool in TOOLS:
        if not shutil.which(tool):
            unavailable(f"{tool} is not installed (scripts/test installs it)")
    if not os.path.exists(BASH_COMPLETION):
        unavailable("the bash-completion package is not installed (scripts/test installs it)")
    tmp = tempfile.mkdtemp(prefix="accel-completion-")
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(ACCEL, os.path.join(bindir, "accel"))
    scripts = {}
    for shell in ("bash", "zsh", "fish"):
        r = run(ACCEL, "completion", shell)
        check(f"accel completion {shell} exits 0", r.returncode == 0 and r.stdout)
        scripts[shell] = r.stdout
    zfunc = os.path.join(tmp, "zfunc")
    os.makedirs(zfunc)
    with open(os.path.join(zfunc, "_accel"), "w") as f:
        f.write(scripts["zsh"])
    for shell in ("bash", "fish"):
        with open(os.path.join(tmp, f"accel.{shell}"), "w") as f:
            f.write(scripts[shell])
    other = run(ACCEL, "completion", "tcsh")
    check("accel completion tcsh: exit 2 listing the shells",
          other.returncode == 2 and "bash, zsh, fish" in other.stderr)

    page = run(ACCEL, "manual").stdout
    rendered = run("groff", "-ww", "-man", "-Tutf8", input=page)
    check("groff -ww -man renders the page without a warning",
          rendered.returncode == 0 and rendered.stdout and not rendered.stderr.strip())
    if rendered.stderr.strip():
        print(rendered.stderr[:2000])
    source = page.replace("\\-", "-")
    for name, text in [("bash", scripts["bash"]), ("zsh", scripts["zsh"]), ("fish", scripts["fish"]),
                       ("manual page", source)]:
        words = set(re.findall(r"--?[A-Za-z0-9_-]+", text))
        if name == "fish":  # -l NAME
            words |= {"--" + w for w in re.findall(r" -l ([A-Za-z0-9_-]+)", text)}
        missing = sorted(flag_spellings() - words)
        check(f"every launch and torchrun flag, both spellings, in the {name}", not missing)
        if missing:
            print("  missing: " + " ".join(missing[:20]))

    fish = run("fish", "--no-config", "-c", f"source {tmp}/accel.fish; complete -C 'accel launch --mix'",
               env={**os.environ, "PATH": bindir + ":" + os.environ["PATH"]})
    check("fish: complete -C 'accel launch --mix' gives --mixed_precision",
          any(line.split("\t")[0] == "--mixed_precision" for line in fish.stdout.splitlines()))

    t = Tmux(tmp)
    try:
        interactive(t, "bash", "bash --norc --noprofile -i",
                    f"source {BASH_COMPLETION}; source {tmp}/accel.bash; PS1='$ '")
        interactive(t, "bash-plain", "bash --norc --noprofile -i", f"source {tmp}/accel.bash; PS1='$ '")
        interactive(t, "zsh", "zsh -f",
                    f"fpath=({zfunc} $fpath); autoload -U compinit; compinit -u; PS1='$ '")
    finally:
        t.tmux("kill-server")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"completion: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
