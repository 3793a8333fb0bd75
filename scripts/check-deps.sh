#!/usr/bin/env bash
# Fails when the build or the tests use a Debian package that scripts/install-deps.sh does not
# install (the build machine may hold packages installed by hand; a fresh one does not).
# Usage: scripts/check-deps.sh BUILD_DIR [--install-script FILE] [--verbose]
# The work is done by scripts/check_deps.py; see its docstring for what counts as "used".
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/check_deps.py" "$@"
