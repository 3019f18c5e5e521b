#!/usr/bin/env bash
# Install the real client tools that tests/conformance runs against, into .tools/ (gitignored):
#
#   .tools/npm/              npm prefix with the exact versions pinned in tools/package.json
#                            (opencode-ai, markdownlint-cli2, and the real client CLIs
#                            @anthropic-ai/claude-code, @openai/codex, @google/gemini-cli,
#                            @github/copilot (a loader plus its platform package);
#                            their commands land in .tools/npm/node_modules/.bin/)
#   .tools/skills-ref-venv/  Python >= 3.11 venv with skills-ref (the `agentskills` CLI), pinned
#                            in tools/skills-ref-requirements.txt
#   .tools/code-check-venv/  Python >= 3.11 venv with ruff and mypy for agentrc's own code,
#                            pinned in tools/code-check-requirements.txt
#   .tools/<name>-venv/      one venv per client CLI from PyPI, pinned in tools/<name>-requirements.txt:
#                            hermes (hermes-agent, Python >= 3.11), aider (aider-chat, Python >= 3.11),
#                            vibe (mistral-vibe, Python >= 3.12), kimi (kimi-cli, Python >= 3.13)
#
# Idempotent: each part is skipped when the installed versions already match the pins.
# Needs: node + npm (npm registry reachable), and a Python >= 3.11 (PyPI reachable).
#
# Usage: tools/install.sh [--force]
#   --force            reinstall both parts even if the versions match
# Environment:
#   AGENTRC_PY311      path to the Python >= 3.11 interpreter to build the venv with
#                      (otherwise: python3.11 on PATH, ~/.pyenv/versions/3.11*/bin/python3.11,
#                      then python3.12 / python3.13 / python3 if they are >= 3.11)
#   AGENTRC_PY312, AGENTRC_PY313
#                      the same for the PyPI clients that need Python >= 3.12 (vibe) or 3.13 (kimi)
#
# No package-lock.json is committed (lockfiles name registry hosts); npm writes one under
# .tools/npm, which is gitignored. The exact pins in tools/package.json are the contract.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_SRC="$ROOT/tools"
SKILLS_REF_REQS="$TOOLS_SRC/skills-ref-requirements.txt"
SKILLS_REF_VERSION="$(sed -n 's/^skills-ref==\([0-9][0-9.]*\)[[:space:]]*$/\1/p' "$SKILLS_REF_REQS")"
DEST="$ROOT/.tools"
NPM_PREFIX="$DEST/npm"
VENV="$DEST/skills-ref-venv"

FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: error: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "install.sh: $*"; }
die() { echo "install.sh: error: $*" >&2; exit 1; }

[ -n "$SKILLS_REF_VERSION" ] || die "tools/skills-ref-requirements.txt must pin skills-ref==X.Y.Z"
mkdir -p "$DEST"

# ---------------------------------------------------------------------------------------------
# 1. npm tools
# ---------------------------------------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "node not found on PATH; install Node.js >= 18 (with npm) first"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH; install npm (it ships with Node.js)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 22 ]; then
  # markdownlint-cli2 0.24.1 and @anthropic-ai/claude-code declare engines.node >=22; both run on
  # Node 20 (claude is a native binary; node only runs its postinstall), but npm warns (EBADENGINE).
  say "note: Node $(node --version) is older than the Node >= 22 that markdownlint-cli2 and claude-code declare; expect EBADENGINE warnings"
fi

# Prints "name version" for every pinned dependency in tools/package.json (an exact version,
# a pre-release suffix allowed: Amp publishes 0.0.<build>-g<commit>). Optional dependencies
# (a CLI published for one platform only, such as droid's @factory/cli-linux-x64) are listed
# only when npm installed them: on another platform their judges skip.
pinned_deps() {
  node -e '
    const fs = require("fs"), path = require("path");
    const p = require(process.argv[1]);
    const deps = Object.assign({}, p.dependencies || {}, p.devDependencies || {});
    for (const [n, v] of Object.entries(p.optionalDependencies || {})) {
      if (fs.existsSync(path.join(process.argv[2], "node_modules", n, "package.json"))) deps[n] = v;
    }
    for (const [n, v] of Object.entries(Object.assign({}, deps, p.optionalDependencies || {}))) {
      if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(v)) { console.error(`${n}: "${v}" is not an exact version`); process.exit(3); }
    }
    for (const [n, v] of Object.entries(deps)) console.log(n + " " + v);' "$TOOLS_SRC/package.json" "$NPM_PREFIX"
}

# Exit 0 when every pinned package is installed in .tools/npm at exactly the pinned version.
npm_tools_current() {
  local name want have
  [ -f "$NPM_PREFIX/package.json" ] || return 1
  [ "$(cat "$TOOLS_SRC/package.json")" = "$(cat "$NPM_PREFIX/package.json")" ] || return 1
  while read -r name want; do
    have="$(node -e 'try { console.log(require(process.argv[1]).version) } catch (e) { }' \
      "$NPM_PREFIX/node_modules/$name/package.json")"
    [ "$have" = "$want" ] || return 1
  done < <(pinned_deps)
  return 0
}

# The real opencode binary lives in a platform package (opencode-<os>-<arch>[-baseline]);
# opencode-ai's postinstall links it over a placeholder. Find one that actually runs.
find_opencode() {
  local os arch cand
  os="$(node -p 'process.platform')"
  arch="$(node -p 'process.arch')"
  for cand in \
    "$NPM_PREFIX/node_modules/opencode-$os-$arch/bin/opencode" \
    "$NPM_PREFIX/node_modules/opencode-$os-$arch-baseline/bin/opencode" \
    "$NPM_PREFIX/node_modules/.bin/opencode"; do
    if [ -x "$cand" ] && "$cand" --version >/dev/null 2>&1; then
      echo "$cand"
      return 0
    fi
  done
  return 1
}

pinned_deps >/dev/null || die "tools/package.json must pin exact versions (x.y.z)"

if [ "$FORCE" = 0 ] && npm_tools_current; then
  say "npm tools already installed in .tools/npm ($(pinned_deps | tr '\n' ' '| sed 's/ $//'))"
else
  say "installing npm tools into .tools/npm: $(pinned_deps | tr '\n' ' ')"
  mkdir -p "$NPM_PREFIX"
  cp "$TOOLS_SRC/package.json" "$NPM_PREFIX/package.json"
  # A lockfile left from an older pin set would fight the new pins.
  rm -f "$NPM_PREFIX/package-lock.json"
  if ! npm install --prefix "$NPM_PREFIX" --no-audit --no-fund; then
    rm -f "$NPM_PREFIX/package.json"   # so the next run retries instead of skipping
    die "npm install failed (is the npm registry reachable? see the npm output above)"
  fi
  npm_tools_current || { rm -f "$NPM_PREFIX/package.json"; die "npm install finished but the installed versions do not match tools/package.json"; }
fi

want_oc="$(pinned_deps | awk '$1 == "opencode-ai" {print $2}')"
if ! oc="$(find_opencode)"; then
  die "no working opencode binary under .tools/npm/node_modules (no platform package opencode-$(node -p 'process.platform')-$(node -p 'process.arch') was installed, or its postinstall failed); rerun with --force"
fi
have_oc="$("$oc" --version 2>/dev/null | tr -d '[:space:]')"
[ "$have_oc" = "$want_oc" ] || die "$oc --version printed '$have_oc', expected '$want_oc'"
say "opencode $have_oc: ${oc#"$ROOT"/}"
mdl="$NPM_PREFIX/node_modules/.bin/markdownlint-cli2"
[ -x "$mdl" ] || die "markdownlint-cli2 is missing from .tools/npm/node_modules/.bin; rerun with --force"
say "markdownlint-cli2: ${mdl#"$ROOT"/}"

# Runs "$@" with a throwaway HOME (and CODEX_HOME), so a version check writes nothing into the
# real home directory; prints stdout only.
run_isolated() {
  local h rc=0
  h="$(mktemp -d)"
  mkdir -p "$h/.codex"   # codex exits 1 ("failed to resolve CODEX_HOME") when CODEX_HOME is missing
  HOME="$h" CODEX_HOME="$h/.codex" "$@" 2>/dev/null || rc=$?
  rm -rf "$h"
  return "$rc"
}

# check_cli COMMAND PACKAGE: .bin/COMMAND runs and its --version names the version pinned for PACKAGE.
check_cli() {
  local cmd="$1" pkg="$2" bin want have
  bin="$NPM_PREFIX/node_modules/.bin/$cmd"
  want="$(pinned_deps | awk -v p="$pkg" '$1 == p {print $2}')"
  [ -n "$want" ] || return 0   # not pinned: nothing to check
  [ -x "$bin" ] || die "$cmd is missing from .tools/npm/node_modules/.bin ($pkg $want); rerun with --force"
  have="$(run_isolated "$bin" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)" || true
  [ "$have" = "$want" ] || die "${bin#"$ROOT"/} --version gave '$have', expected '$want' ($pkg); rerun with --force"
  say "$cmd $have: ${bin#"$ROOT"/}"
}

# claude's bin/claude.exe is a placeholder script until the package's postinstall (install.cjs)
# links the native binary from @anthropic-ai/claude-code-<os>-<arch> over it. When npm skipped
# install scripts (ignore-scripts, allow-scripts policy), run that postinstall once by hand.
claude_pkg="$NPM_PREFIX/node_modules/@anthropic-ai/claude-code"
if [ -f "$claude_pkg/install.cjs" ] && ! run_isolated "$NPM_PREFIX/node_modules/.bin/claude" --version >/dev/null; then
  say "claude's native binary is not linked (postinstall skipped?); running its install.cjs"
  (cd "$claude_pkg" && node install.cjs) || die "node $claude_pkg/install.cjs failed; rerun with --force"
fi
check_cli claude @anthropic-ai/claude-code
# codex.js execs the native binary shipped in the platform package @openai/codex-<os>-<arch>
# (vendor/<triple>/bin/codex); nothing is downloaded after npm install.
check_cli codex @openai/codex
check_cli gemini @google/gemini-cli

# ---------------------------------------------------------------------------------------------
# 2. skills-ref venv (needs Python >= 3.11)
# ---------------------------------------------------------------------------------------------
py_ok() {  # $1 = interpreter; succeeds when it runs and is >= 3.11 with venv support
  [ -n "$1" ] && "$1" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

find_py311() {
  local cand
  if [ -n "${AGENTRC_PY311:-}" ]; then
    py_ok "$AGENTRC_PY311" && { echo "$AGENTRC_PY311"; return 0; }
    echo "install.sh: error: AGENTRC_PY311=$AGENTRC_PY311 is not a working Python >= 3.11 with the venv module" >&2
    return 2
  fi
  # pyenv shims exist even when the version is not selected, so every candidate is run, not just found.
  for cand in python3.11 "$HOME"/.pyenv/versions/3.11*/bin/python3.11 python3.12 python3.13 python3; do
    if [ "${cand#/}" = "$cand" ]; then
      cand="$(command -v "$cand" 2>/dev/null)" || continue
    fi
    py_ok "$cand" && { echo "$cand"; return 0; }
  done
  return 1
}

venv_current() {
  [ -x "$VENV/bin/agentskills" ] || return 1
  local have
  have="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("skills-ref"))' 2>/dev/null)" || return 1
  [ "$have" = "$SKILLS_REF_VERSION" ]
}

if [ "$FORCE" = 0 ] && venv_current; then
  say "skills-ref $SKILLS_REF_VERSION already installed in .tools/skills-ref-venv"
else
  rc=0
  py="$(find_py311)" || rc=$?
  if [ "$rc" = 2 ]; then exit 1; fi
  [ "$rc" = 0 ] || die "no Python >= 3.11 found (skills-ref $SKILLS_REF_VERSION requires it). Set AGENTRC_PY311=/path/to/python3.11, put python3.11 on PATH, or install one with pyenv (~/.pyenv/versions/3.11*)"
  say "creating .tools/skills-ref-venv with $py ($("$py" -c 'import platform; print(platform.python_version())'))"
  "$py" -m venv --clear "$VENV" || die "$py -m venv failed (on Debian/Ubuntu install the python3.11-venv package)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$SKILLS_REF_REQS" \
    || { rm -rf "$VENV"; die "pip install skills-ref==$SKILLS_REF_VERSION failed (is PyPI reachable? see above)"; }
  venv_current || die "skills-ref installed but .tools/skills-ref-venv/bin/agentskills or its version ($SKILLS_REF_VERSION) is missing"
fi
say "agentskills: ${VENV#"$ROOT"/}/bin/agentskills"

# ---------------------------------------------------------------------------------------------
# 3. code-check venv: ruff and mypy for agentrc's own code (Python >= 3.11)
# ---------------------------------------------------------------------------------------------
CHECK_REQS="$TOOLS_SRC/code-check-requirements.txt"
CHECK_VENV="$DEST/code-check-venv"
if [ "$FORCE" = 0 ] && [ -x "$CHECK_VENV/bin/ruff" ] && [ -x "$CHECK_VENV/bin/mypy" ] \
    && cmp -s "$CHECK_REQS" "$CHECK_VENV/requirements.txt"; then
  say "ruff and mypy already installed in .tools/code-check-venv"
else
  rc=0
  py="$(find_py311)" || rc=$?
  [ "$rc" = 0 ] || die "no Python >= 3.11 found for ruff and mypy (see AGENTRC_PY311 above)"
  say "creating .tools/code-check-venv with $py"
  "$py" -m venv --clear "$CHECK_VENV" || die "$py -m venv failed"
  "$CHECK_VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$CHECK_REQS" \
    || { rm -rf "$CHECK_VENV"; die "pip install of tools/code-check-requirements.txt failed (is PyPI reachable?)"; }
  cp "$CHECK_REQS" "$CHECK_VENV/requirements.txt"
fi
say "ruff, mypy: ${CHECK_VENV#"$ROOT"/}/bin"

# ---------------------------------------------------------------------------------------------
# 4. PyPI client CLIs, the judges of tests/conformance: one venv each (their dependency pins
#    differ), .tools/<name>-venv, pinned in tools/<name>-requirements.txt (<package>==X.Y.Z)
# ---------------------------------------------------------------------------------------------
# find_py_min MINOR: a Python >= 3.MINOR with venv support (AGENTRC_PY3<MINOR> first, then
# python3.MINOR.. on PATH, pyenv's versions, python3).
find_py_min() {
  local minor="$1" var cand m
  var="AGENTRC_PY3$minor"
  if [ -n "${!var:-}" ]; then
    "${!var}" -c "import sys, venv; sys.exit(0 if sys.version_info >= (3, $minor) else 1)" >/dev/null 2>&1 \
      && { echo "${!var}"; return 0; }
    echo "install.sh: error: $var=${!var} is not a working Python >= 3.$minor with the venv module" >&2
    return 2
  fi
  for m in $(seq "$minor" 14); do
    for cand in "python3.$m" "$HOME"/.pyenv/versions/3."$m".*/bin/python3."$m"; do
      if [ "${cand#/}" = "$cand" ]; then
        cand="$(command -v "$cand" 2>/dev/null)" || continue
      fi
      "$cand" -c "import sys, venv; sys.exit(0 if sys.version_info >= (3, $minor) else 1)" >/dev/null 2>&1 \
        && { echo "$cand"; return 0; }
    done
  done
  cand="$(command -v python3 2>/dev/null)" || return 1
  "$cand" -c "import sys, venv; sys.exit(0 if sys.version_info >= (3, $minor) else 1)" >/dev/null 2>&1 \
    && { echo "$cand"; return 0; }
  return 1
}

# pypi_client NAME PACKAGE COMMAND MINOR: .tools/NAME-venv holds PACKAGE at the version pinned in
# tools/NAME-requirements.txt (skipped when it already does), built with a Python >= 3.MINOR.
pypi_client() {
  local name="$1" pkg="$2" cmd="$3" minor="$4" reqs want venv have rc py
  reqs="$TOOLS_SRC/$name-requirements.txt"
  venv="$DEST/$name-venv"
  want="$(sed -n "s/^$pkg==\([0-9][0-9.]*\)[[:space:]]*$/\1/p" "$reqs")"
  [ -n "$want" ] || die "tools/$name-requirements.txt must pin $pkg==X.Y.Z"
  have="$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$pkg'))" 2>/dev/null)" || have=""
  if [ "$FORCE" = 0 ] && [ "$have" = "$want" ] && [ -x "$venv/bin/$cmd" ]; then
    say "$pkg $want already installed in .tools/$name-venv"
  else
    rc=0
    py="$(find_py_min "$minor")" || rc=$?
    [ "$rc" = 0 ] || die "no Python >= 3.$minor found for $pkg $want (set AGENTRC_PY3$minor=/path/to/python3.$minor)"
    say "creating .tools/$name-venv with $py: $pkg $want"
    "$py" -m venv --clear "$venv" || die "$py -m venv failed"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$reqs" \
      || { rm -rf "$venv"; die "pip install of tools/$name-requirements.txt failed (is PyPI reachable? see above)"; }
    [ -x "$venv/bin/$cmd" ] || { rm -rf "$venv"; die "$pkg $want installed but .tools/$name-venv/bin/$cmd is missing"; }
  fi
  say "$cmd: ${venv#"$ROOT"/}/bin/$cmd"
}

pypi_client hermes hermes-agent hermes 11
pypi_client aider aider-chat aider 11
pypi_client vibe mistral-vibe vibe 12
pypi_client kimi kimi-cli kimi 13

# ---------------------------------------------------------------------------------------------
# 5. OpenClaw, the judge of the OpenClaw output, with the Node it needs (it refuses a Node older
#    than 24.16): both pinned in tools/openclaw-package.json, installed into .tools/openclaw, the
#    npm package `node` first (the platform's Node binary, from the registry), then the rest with
#    that Node first on PATH, since openclaw's preinstall checks the Node that runs it.
# ---------------------------------------------------------------------------------------------
OC_PINS="$TOOLS_SRC/openclaw-package.json"
OC_PREFIX="$DEST/openclaw"
oc_pin() { node -p "require(process.argv[1]).devDependencies[process.argv[2]]" "$OC_PINS" "$1"; }
oc_have() { node -e 'try { console.log(require(process.argv[1]).version) } catch (e) { }' \
  "$OC_PREFIX/node_modules/$1/package.json"; }
oc_node="$(oc_pin node)"
oc_claw="$(oc_pin openclaw)"
if [ "$FORCE" = 0 ] && [ "$(oc_have node)" = "$oc_node" ] && [ "$(oc_have openclaw)" = "$oc_claw" ]; then
  say "openclaw $oc_claw and node $oc_node already installed in .tools/openclaw"
else
  say "installing node $oc_node, then openclaw $oc_claw, into .tools/openclaw"
  mkdir -p "$OC_PREFIX"
  rm -f "$OC_PREFIX/package-lock.json"
  printf '{"private": true}\n' > "$OC_PREFIX/package.json"
  npm install --prefix "$OC_PREFIX" --no-audit --no-fund --no-save "node@$oc_node" \
    || die "npm install node@$oc_node into .tools/openclaw failed"
  cp "$OC_PINS" "$OC_PREFIX/package.json"
  PATH="$OC_PREFIX/node_modules/.bin:$PATH" npm install --prefix "$OC_PREFIX" --no-audit --no-fund \
    || { rm -f "$OC_PREFIX/package.json"; die "npm install of tools/openclaw-package.json failed"; }
  [ "$(oc_have openclaw)" = "$oc_claw" ] || die "openclaw $oc_claw is not in .tools/openclaw after npm install"
fi
say "openclaw: .tools/openclaw/node_modules/openclaw (node $("$OC_PREFIX/node_modules/.bin/node" --version))"
say "done"
