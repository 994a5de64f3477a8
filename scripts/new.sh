#!/usr/bin/env bash
# A new Quarkus service on the idempotency extension, from the extension's codestart: one
# idempotent Kafka consumer, one idempotent REST endpoint, and tests of each (the gift-card
# example of idem-quarkus/codestarts). What this runs is Quarkus' own create goal:
#
#   mvn io.quarkus:quarkus-maven-plugin:<quarkus>:create -Dextensions=dev.idem:idem-quarkus:<version>
#
#   scripts/new.sh <dir> [--package <java.package>] [--no-install]
#
# <dir> must not exist; its last part is the artifactId. --package names the Java package and the
# groupId (org.acme by default). The extension (and its codestart) is installed into ~/.m2 first,
# unless --no-install says it just was.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_NAME="idem new"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"

usage() {
  echo "usage: ./idem new <dir> [--package <java.package>] [--no-install]" >&2
  exit 2
}

dir=""
package=org.acme
install=1
while (($#)); do
  case $1 in
    --package)
      (($# > 1)) || usage
      package=$2
      shift 2
      ;;
    --package=*)
      package=${1#--package=}
      shift
      ;;
    --no-install)
      install=0
      shift
      ;;
    -h | --help) usage ;;
    -*) usage ;;
    *)
      [[ -z $dir ]] || usage
      dir=$1
      shift
      ;;
  esac
done
[[ -n $dir ]] || usage

[[ $package =~ ^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$ ]] ||
  die "--package $package: expected a Java package such as com.example.giftcards"
[[ ! -e $dir ]] || die "$dir exists already"
artifact="$(basename -- "$dir")"
[[ $artifact =~ ^[A-Za-z0-9_.-]+$ && $artifact != . && $artifact != .. ]] ||
  die "$artifact cannot be an artifactId: letters, digits and - _ . only"
mkdir -p -- "$(dirname -- "$dir")"
parent="$(cd "$(dirname -- "$dir")" && pwd)"

# The versions the extension is built with: the service gets the same Quarkus.
pom="$ROOT/idem-quarkus/pom.xml"
quarkus_version="$(sed -n 's|.*<quarkus.version>\(.*\)</quarkus.version>.*|\1|p' "$pom" | head -n 1)"
idem_version="$(sed -n '/<artifactId>idem-quarkus-parent<\/artifactId>/,/<version>/s|.*<version>\(.*\)</version>.*|\1|p' "$pom" | head -n 1)"
[[ -n $quarkus_version && -n $idem_version ]] || die "cannot read the versions from $pom"

if ((install)); then
  log "installing the extension $idem_version and its codestart into ~/.m2"
  install_extension
fi

# The create goal adds a project to the pom.xml of the directory it runs in, if there is one: it
# runs in an empty one. The registry client stays off: the extension is named by its coordinates,
# and the platform is the Quarkus the extension is built with, not the registry's latest.
work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT
log "creating $parent/$artifact (package $package) with Quarkus $quarkus_version"
(cd "$work" && "$ROOT/mvnw" -B -q "io.quarkus:quarkus-maven-plugin:$quarkus_version:create" \
  -DquarkusRegistryClient=false \
  -DplatformGroupId=io.quarkus -DplatformArtifactId=quarkus-bom -DplatformVersion="$quarkus_version" \
  -DoutputDirectory="$parent" -DprojectGroupId="$package" -DprojectArtifactId="$artifact" \
  -DpackageName="$package" -Dextensions="dev.idem:idem-quarkus:$idem_version")

[[ -f $parent/$artifact/src/main/java/${package//.//}/GiftCardResource.java ]] ||
  die "the extension's codestart was not applied: is dev.idem:idem-quarkus-codestarts:$idem_version in ~/.m2?"

log "made $parent/$artifact; its tests run against the local servers (./idem services up):"
log "  cd $parent/$artifact && ./mvnw verify"
