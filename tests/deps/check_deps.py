#!/usr/bin/env python3
"""Every external command the project's scripts call must come from a
Debian package that tests/install-deps.sh installs.

Why: CI runs on a machine that keeps what was installed by hand, so a
missing install step can hide behind a green CI (openslide-tools did, for
test_mkslide.sh). This finds the commands by reading the scripts, not by
running them, so a command used only on some path (a GPU machine, a
failure branch) is still found.

What is scanned: tests/**/*.sh, .ci/run, the Makefile's recipes and its
$(shell ...) calls. In each, the words in command position (first word of
a simple command, after | ; & && || ( { then do else ..., inside $(...)
and backticks, after wrappers such as timeout, xargs and env).
Not commands: shell builtins and keywords, functions the scripts define,
words with an expansion ($x) or a glob, relative paths (the project's own
programs: bin/qc-submit, tests/run.sh).

A command passes when it resolves on a plain Debian PATH and the package
owning it (or any link on the way to the real file) is:
  - named by install-deps.sh (--list), or
  - a direct dependency of a named package (apt installs those with it), or
  - Essential (on every Debian system).
A command that does not resolve at all fails with its name.

Usage: check_deps.py [--packages FILE] [--root DIR] [--verbose]
       check_deps.py --scan FILE    print the command words found in FILE
  --packages FILE   the package names, one a line (default: what
                    `tests/install-deps.sh --list` prints): the test
                    passes a shortened list to prove the check can fail
Exit: 0 all provided, 1 some command is not, 2 usage error.
"""

import os
import re
import subprocess
import sys

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# A fresh Debian user's PATH, without /usr/local: a command found only in
# /usr/local, ~/.pyenv or /opt came from no Debian package.
DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"

# A word that names a redirection's descriptor when a < or > follows it.
FD_WORD = re.compile(r"^([0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$")
# Words after which the next word is again in command position.
RESET_WORDS = {"then", "do", "else", "elif", "if", "while", "until", "!",
               "time", "{", "}", "exec", "builtin", "nohup",
               "setsid", "sudo", "$SUDO", "${SUDO}"}
# Wrappers: (options that take a value, how many plain arguments to skip
# before the command).
WRAPPERS = {
    "timeout": ({"-s", "--signal", "-k", "--kill-after"}, 1),
    "nice": ({"-n", "--adjustment"}, 0),
    "ionice": ({"-c", "-n", "-p", "-t"}, 0),
    "stdbuf": ({"-i", "-o", "-e"}, 0),
    "xargs": ({"-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E", "-i"}, 0),
    "env": ({"-u", "-C", "-S"}, 0),
    "taskset": (set(), 1),
    "chrt": (set(), 1),
    "unshare": (set(), 0),
    "command": (set(), 0),   # command -v NAME only looks NAME up: see below
}
OPERATORS = ["<<<", "<<-", "&&", "||", ";;", "|&", "<<", ">>", ">&", "<&",
             "&>", ";", "&", "|", "(", ")", "<", ">", "\n"]
SEPARATORS = {";", "&", "&&", "||", "|", "|&", "\n", "(", ";;"}
REDIRECTS = {"<", ">", ">>", ">&", "<&", "&>", "<<<"}
# a word that is one expansion and nothing else ($x, ${x}, "${a[@]}")
WHOLE_EXPANSION = re.compile(r'^\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[@*])$')
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
FUNC_DEF = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*\(\s*\)", re.M)


class Word:
    def __init__(self, text, line, dollar, glob):
        self.text = text          # the word with quotes removed
        self.line = line
        self.dollar = dollar      # it holds a $ expansion or a backtick
        self.expanded = dollar or glob   # its value is not its text
        self.fd = False           # a redirection's descriptor (9>, {fd}>)

    def __repr__(self):
        return f"Word({self.text!r}@{self.line})"


class Scanner:
    """Splits shell text into words and operators; command substitutions
    and backticks are scanned as scripts of their own (found -> uses)."""

    def __init__(self, text, line, uses):
        self.s = text
        self.i = 0
        self.line = line
        self.uses = uses          # list of (command word, line) found
        self.heredocs = []        # delimiters waiting for the next newline

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def nested(self, body, line):
        find_commands(body, line, self.uses)

    def skip_balanced(self, open_c, close_c):
        """From just after an opening bracket to just after its match,
        minding quotes; returns the text inside."""
        depth, start = 1, self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = self.s.find("'", self.i + 1)
                self.i = len(self.s) if end < 0 else end + 1
                continue
            if c == '"':
                self.i += 1
                self.double_quoted(collect=False)
                continue
            if c == "\n":
                self.line += 1
            if c == open_c:
                depth += 1
            elif c == close_c:
                depth -= 1
                if depth == 0:
                    body = self.s[start:self.i]
                    self.i += 1
                    return body
            self.i += 1
        return self.s[start:]

    def dollar(self):
        """At a '$': scans what follows; returns the literal text of it."""
        line = self.line
        self.i += 1
        if self.s.startswith("((", self.i):          # $(( arithmetic ))
            self.i += 2
            self.skip_balanced("(", ")")
            if self.peek() == ")":
                self.i += 1
            return "$((...))"
        if self.peek() == "(":                        # $( command )
            self.i += 1
            self.nested(self.skip_balanced("(", ")"), line)
            return "$(...)"
        if self.peek() == "{":
            self.i += 1
            return "${" + self.skip_balanced("{", "}") + "}"
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", self.s[self.i:])
        if m:
            self.i += len(m.group(0))
            return "$" + m.group(0)
        return "$"

    def backtick(self):
        line, start = self.line, self.i + 1
        end = self.s.find("`", start)
        end = len(self.s) if end < 0 else end
        self.nested(self.s[start:end], line)
        self.line += self.s.count("\n", start, end)
        self.i = end + 1

    def double_quoted(self, collect=True):
        """From just after '"' to just after the closing one."""
        out, expanded = [], False
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.peek(1) in '"\\$`\n':
                out.append(self.peek(1))
                self.i += 2
                continue
            if c == "$" and self.peek(1) not in ('"', ""):
                out.append(self.dollar())
                expanded = True
                continue
            if c == "`":
                self.backtick()
                expanded = True
                continue
            if c == "\n":
                self.line += 1
            out.append(c)
            self.i += 1
        return "".join(out), expanded

    def read_heredocs(self):
        """At the start of a line after a << operator: skips the bodies."""
        for delim, strip in self.heredocs:
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                row = self.s[self.i:end]
                self.i = end + 1
                self.line += 1
                if (row.lstrip("\t") if strip else row) == delim:
                    break
        self.heredocs = []

    def tokens(self):
        """Yields ("op", text, line) and ("word", Word) items."""
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
                continue
            if c == "\\" and self.peek(1) == "\n":
                self.i += 2
                self.line += 1
                continue
            if c == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
                continue
            if self.s.startswith("((", self.i):
                # (( arithmetic )) and for (( ; ; )): no commands inside
                self.i += 2
                self.skip_balanced("(", ")")
                if self.peek() == ")":
                    self.i += 1
                continue
            op = next((o for o in OPERATORS if self.s.startswith(o, self.i)), None)
            if op:
                line = self.line
                self.i += len(op)
                if op == "\n":
                    self.line += 1
                    if self.heredocs:
                        self.read_heredocs()
                if op in ("<<", "<<-"):
                    yield ("op", op, line)
                    w = self.word()
                    if w:
                        self.heredocs.append((w.text, op == "<<-"))
                    continue
                yield ("op", op, line)
                continue
            w = self.word()
            if w is not None:
                yield ("word", w)

    @staticmethod
    def is_array_start(text):
        m = ASSIGNMENT.match(text)
        return m is not None and m.end() == len(text)

    def array_elements(self):
        """From just after 'name=(' to just after its ')'."""
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == ")":
                self.i += 1
                return
            if c == "\n":
                self.line += 1
                self.i += 1
            elif c == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            elif self.word() is None:
                self.i += 1     # blanks, or an operator character: no word

    def word(self):
        while self.peek() in (" ", "\t"):
            self.i += 1
        out, expanded, glob, line = [], False, False, self.line
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "(" and self.is_array_start("".join(out)):
                # name=( ... ): the elements are words, not commands (a
                # substitution inside one is still scanned)
                self.i += 1
                self.array_elements()
                out.append("(...)")
                continue
            if c in " \t\n;&|()<>":
                # 2>&1, 2>file: a number right before a redirect is its fd
                break
            if c == "\\":
                if self.peek(1) == "\n":
                    self.i += 2
                    self.line += 1
                    continue
                out.append(self.peek(1))
                self.i += 2
                continue
            if c == "'":
                end = self.s.find("'", self.i + 1)
                end = len(self.s) if end < 0 else end
                out.append(self.s[self.i + 1:end])
                self.line += self.s.count("\n", self.i, end)
                self.i = end + 1
                continue
            if c == '"':
                self.i += 1
                text, e = self.double_quoted()
                out.append(text)
                expanded |= e
                continue
            if c == "$":
                out.append(self.dollar())
                expanded = True
                continue
            if c == "`":
                self.backtick()
                expanded = True
                continue
            if c in "*?[":
                glob = True
            out.append(c)
            self.i += 1
        if not out and not expanded:
            return None
        w = Word("".join(out), line, expanded, glob)
        # 9>>file, {lock}>file: the descriptor of the redirection after it
        w.fd = self.peek() in ("<", ">") and bool(FD_WORD.match(w.text))
        return w


def find_commands(text, line, uses):
    """Appends (word, line) for each word in command position of the
    shell text (command substitutions recursed into by the scanner)."""
    sc = Scanner(text, line, uses)
    expect = True      # the next word is in command position
    redirect = False   # the next word is a redirection's target
    case_pattern = False
    pending = None     # after a wrapper: what to skip before its command
    skip_until = None  # keyword that ends a construct whose words are no commands
    after_case = 0     # words since 'case' (the subject, then 'in')
    for_state = 0      # 1: after 'for', the name; 2: its word list
    for tok in sc.tokens():
        if tok[0] == "op":
            op = tok[1]
            if redirect and op not in SEPARATORS:
                continue
            redirect = op in REDIRECTS
            if op in ("<<", "<<-"):
                redirect = False
                continue
            if case_pattern:
                if op == ")":
                    case_pattern = False
                    expect = True
                continue
            if op == ";;":
                case_pattern = True
                expect = False
                continue
            if op in SEPARATORS:
                if for_state:
                    for_state = 0
                expect, pending = True, None
            elif op == ")":
                expect, pending = False, None
            continue
        w = tok[1]
        if redirect:
            redirect = False
            continue
        if w.fd:
            continue        # exec 9>>file: no command, the redirect follows
        if w.text == "{" and not w.dollar:
            expect = True   # a group or a function's body: commands follow
            continue
        if skip_until:
            if w.text == skip_until:
                skip_until = None
                expect = False
            continue
        if after_case:
            after_case += 1
            if w.text == "in":
                after_case, case_pattern = 0, True
            continue
        if case_pattern:
            if w.text == "esac":
                case_pattern, expect = False, False
            continue
        if for_state:
            if w.text == "do":
                for_state, expect = 0, True
            continue
        if pending is not None:
            # after a wrapper: its options (and their values) and its plain
            # arguments (timeout's duration) come before the command
            if pending["value"]:
                pending["value"] = False
                continue
            if w.text.startswith("-"):
                if pending["lookup"] and w.text in ("-v", "-V"):
                    pending, expect = None, False
                    continue
                pending["value"] = w.text in pending["opts"]
                continue
            if ASSIGNMENT.match(w.text):
                continue
            if pending["env"] and w.dollar and WHOLE_EXPANSION.match(w.text):
                continue    # env "${vars[@]}" cmd: an expansion may hold assignments
                            # ("$BIN/tool", with more after it, is the command)
            if pending["args"] > 0:
                pending["args"] -= 1
                continue
            pending = None
            expect = True   # this word is the command
        if not expect:
            continue
        if ASSIGNMENT.match(w.text) and not w.text.startswith("="):
            continue
        t = w.text
        if not w.dollar:
            if t == "case":
                after_case, expect = 1, False
                continue
            if t in ("for", "select"):
                for_state, expect = 1, False
                continue
            if t == "[[":
                skip_until, expect = "]]", False
                continue
            if t == "function":
                expect = False
                continue
            if t in ("done", "fi", "esac"):
                expect = False
                continue
        if t in RESET_WORDS:
            continue
        uses.append((w, w.line))
        expect = False
        if not w.expanded and t in WRAPPERS:
            opts, nargs = WRAPPERS[t]
            pending = {"opts": opts, "args": nargs, "value": False,
                       "lookup": t == "command", "env": t == "env"}
    return uses


def makefile_shell(text):
    """The shell text a Makefile runs: recipe lines (tab first) with
    $(VAR) made into words the scanner skips, and $(shell ...) bodies."""
    def shell_text(row):
        row = row.replace("$(CC)", "cc").replace("$(MAKE)", "make")
        row = row.replace("$$", "\x00")
        # any other make variable stands for something configured: a word
        # with an expansion, which the scanner does not count
        row = re.sub(r"\$[({][^()}]*[)}]|\$[@<^?*]", "$MAKEVAR", row)
        return row.replace("\x00", "$")

    parts = []
    joined = re.sub(r"\\\n", " ", text)
    for m in re.finditer(r"\$\(shell ((?:[^()]|\([^()]*\))*)\)", joined):
        parts.append((shell_text(m.group(1)), joined[:m.start()].count("\n") + 1))
    for n, row in enumerate(joined.split("\n"), 1):
        if not row.startswith("\t"):
            continue
        row = row[1:].lstrip("@-+ ")
        row = row.replace("$(Q)", "").lstrip("@-+ ")
        row = re.sub(r"\$\(if [^)]*\)", "", row)
        parts.append((shell_text(row), n))
    return parts


def project_scripts(root):
    files = []
    for top in ("tests",):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in names if n.endswith(".sh")]
    ci = os.path.join(root, ".ci", "run")
    if os.path.exists(ci):
        files.append(ci)
    return sorted(files)


def run(cmd, env_path=DEBIAN_PATH):
    env = dict(os.environ, PATH=env_path, LC_ALL="C")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.returncode, r.stdout


def builtins_and_keywords():
    _, out = run(["bash", "-c", "compgen -b; compgen -k"])
    return set(out.split())


def link_chain(path):
    """The path and every link on the way to the real file, each also in
    its other /bin or /usr/bin spelling (Debian 12 merges them, dpkg knows
    one)."""
    seen, todo, out = set(), [path], []
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for cand in (p, re.sub(r"^/usr(/s?bin/)", r"\1", p), re.sub(r"^(/s?bin/)", r"/usr\1", p)):
            if cand not in out:
                out.append(cand)
        if os.path.islink(p):
            target = os.path.join(os.path.dirname(p), os.readlink(p))
            todo.append(os.path.normpath(target))
    return out


def owners_of(paths):
    """{path: packages owning it} for every path, in one dpkg-query call:
    each call reads dpkg's whole file database (~0.3 s), and a check of
    the project's ~75 commands asks about ~250 paths."""
    found = {p: set() for p in paths}
    if not paths:
        return found
    # a path dpkg does not know makes the exit status 1; the others are
    # still printed, one "pkg[, pkg]: path" row each
    _, out = run(["dpkg-query", "-S"] + sorted(paths))
    for row in out.splitlines():
        if row.startswith("diversion ") or ": " not in row:
            continue
        names, path = row.split(": ", 1)
        if path in found:
            found[path].update(n.strip().split(":")[0] for n in names.split(","))
    return found


def depends_of(pkgs):
    """Direct dependencies (every alternative) of the named packages."""
    deps = set()
    for p in pkgs:
        rc, out = run(["dpkg-query", "-W", "-f", "${Depends},${Pre-Depends}", p])
        if rc != 0:
            continue
        for alt in re.split(r"[,|]", out):
            name = alt.strip().split(" ")[0].split(":")[0]
            if name:
                deps.add(name)
    return deps


def essential(pkg, cache={}):
    if pkg not in cache:
        rc, out = run(["dpkg-query", "-W", "-f", "${Essential}", pkg])
        cache[pkg] = rc == 0 and out.strip() == "yes"
    return cache[pkg]


def main(argv):
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    packages_file, verbose = None, False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--packages" and args:
            packages_file = args.pop(0)
        elif a == "--root" and args:
            root = args.pop(0)
        elif a == "--scan" and args:
            with open(args.pop(0)) as f:
                for w, ln in find_commands(f.read(), 1, []):
                    print(f"{ln}\t{'$' if w.expanded else ''}{w.text}")
            return 0
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            print(f"check_deps: unknown argument {a!r} (see --help)", file=sys.stderr)
            return 2
    if packages_file:
        with open(packages_file) as f:
            named = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    else:
        rc, out = run(["sh", os.path.join(root, "tests", "install-deps.sh"), "--list"], SYSTEM_PATH)
        if rc != 0:
            print("check_deps: tests/install-deps.sh --list failed", file=sys.stderr)
            return 2
        named = set(out.split())
    if not named:
        print("check_deps: no package names given", file=sys.stderr)
        return 2

    uses = []   # (command, "file:line")
    sources = []
    for path in project_scripts(root):
        with open(path, errors="replace") as f:
            sources.append((path, f.read(), 1))
    mk = os.path.join(root, "Makefile")
    with open(mk) as f:
        for text, line in makefile_shell(f.read()):
            sources.append((mk, text, line))
    defined = set()
    for _, text, _ in sources:
        defined.update(FUNC_DEF.findall(text))
    skip = builtins_and_keywords() | defined
    for path, text, line in sources:
        found = []
        find_commands(text, line, found)
        rel = os.path.relpath(path, root)
        for w, ln in found:
            t = w.text
            if w.expanded or t in skip or not t:
                continue
            if "/" in t and not t.startswith("/"):
                continue          # the project's own programs and scripts
            uses.append((t, f"{rel}:{ln}"))

    allowed = named | depends_of(named)
    by_cmd = {}
    for cmd, where in uses:
        by_cmd.setdefault(cmd, []).append(where)
    resolved = {}
    for cmd in sorted(by_cmd):
        if cmd.startswith("/"):
            resolved[cmd] = cmd if os.access(cmd, os.X_OK) else ""
        else:
            rc, out = run(["sh", "-c", 'command -v "$1"', "sh", cmd])
            resolved[cmd] = out.strip() if rc == 0 and out.strip().startswith("/") else ""
    chains = {cmd: link_chain(path) for cmd, path in resolved.items() if path}
    owner = owners_of({p for chain in chains.values() for p in chain})
    bad = 0
    for cmd in sorted(by_cmd):
        where = by_cmd[cmd][0] + (f" (+{len(by_cmd[cmd]) - 1} more)" if len(by_cmd[cmd]) > 1 else "")
        path = resolved[cmd]
        if not path:
            print(f"FAIL {cmd}: not installed (called at {where}); add its Debian package to tests/install-deps.sh")
            bad += 1
            continue
        pkgs = set().union(*(owner[p] for p in chains[cmd]))
        how = sorted(p for p in pkgs if p in named)
        how = how or sorted(p + " (dependency of a named package)" for p in pkgs if p in allowed)
        how = how or sorted(p + " (Essential)" for p in pkgs if essential(p))
        if how:
            if verbose:
                print(f"ok   {cmd}: {how[0]}  [{where}]")
            continue
        why = f"from {', '.join(sorted(pkgs))}" if pkgs else "from no Debian package"
        print(f"FAIL {cmd}: {path} comes {why}, which tests/install-deps.sh does not install (called at {where})")
        bad += 1
    print(f"{len(by_cmd)} commands checked, {bad} not provided by tests/install-deps.sh")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
