# shellcheck shell=bash
# The console's browser tests (ConsoleBrowserTest): Debian's Chromium, the machine's Node.js (20 or
# later, as Playwright needs) and Playwright's driver from the npm registry, at the versions of
# src/test/browser/package-lock.json. The caller sets ROOT and defines log and die (scripts/lib/base.sh).

BROWSER_DEPS="$ROOT/src/test/browser"

browser_setup() {
  [[ -x /usr/bin/chromium ]] || apt_install chromium
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  local stamp="$BROWSER_DEPS/node_modules/.installed-from-lock"
  if ! cmp -s "$BROWSER_DEPS/package-lock.json" "$stamp"; then
    log "browser tests: npm ci in ${BROWSER_DEPS#"$ROOT/"} (Playwright's driver)"
    (cd "$BROWSER_DEPS" && npm ci --no-audit --no-fund --loglevel=error) ||
      die "npm ci failed in ${BROWSER_DEPS#"$ROOT/"}; Playwright needs Node.js 20 or later (node --version: $(node --version 2>&1))"
    cp "$BROWSER_DEPS/package-lock.json" "$stamp"
  fi
}
