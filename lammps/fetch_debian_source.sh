#!/usr/bin/env bash
# Fetches and unpacks the Debian source package of the installed LAMMPS
# (liblammps-dev), for the headers that package leaves out (fmt/, version.h,
# lammpsplugin.h, neigh_request.h, ...), and prints the unpacked tree's path.
#
#   lammps/fetch_debian_source.sh DIR [MIRROR]
#
# DIR keeps everything (the build tree's lammps/debian-source by default;
# .gitignore covers it): a private apt setup (sources list with one deb-src
# line, package lists, cache), the downloaded files and the unpacked tree.
# Nothing on the system changes: apt reads only the private list and writes
# only under DIR, so no root is needed. A second call with the same installed
# version prints the path at once. MIRROR defaults to http://deb.debian.org/debian.
#
# LAMMPS is GPL: these files stay in DIR and are never committed.
set -euo pipefail

dir=${1:?usage: fetch_debian_source.sh DIR [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
log() { echo "fetch_debian_source: $*" >&2; }

command -v dpkg-query >/dev/null || { log "not a Debian system (no dpkg-query)"; exit 1; }
source_package=$(dpkg-query -W -f='${source:Package}' liblammps-dev 2>/dev/null) || true
source_version=$(dpkg-query -W -f='${source:Version}' liblammps-dev 2>/dev/null) || true
if [ -z "$source_package" ] || [ -z "$source_version" ]; then
    log "liblammps-dev is not installed"
    exit 1
fi
for tool in apt-get dpkg-source; do
    command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install dpkg-dev)"; exit 1; }
done

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
upstream=${source_version#*:}
upstream=${upstream%-*}
tree="$dir/${source_package}-${upstream}"
stamp="$dir/unpacked.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$source_package $source_version" ] && [ -d "$tree/src" ]; then
    echo "$tree"
    exit 0
fi

# The distribution's code name (bookworm on Debian 12).
codename=$( . /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { log "cannot tell the Debian release from /etc/os-release"; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -f "$keyring" ] && signed="[signed-by=$keyring] "

apt_dir="$dir/apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb-src ${signed}${mirror} ${codename} main" > "$apt_dir/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
             -o "Dir::Etc::SourceParts=/dev/null"
             -o "Dir::State::Lists=$apt_dir/lists"
             -o "Dir::Cache=$apt_dir/cache"
             -o "APT::Sandbox::User=$(id -un)")

log "$source_package $source_version from $mirror $codename (private apt lists in $apt_dir)"
apt-get "${apt_options[@]}" -qq update >&2
download="$dir/download"
rm -rf "$download"
mkdir -p "$download"
(cd "$download" && apt-get "${apt_options[@]}" -qq source --download-only \
    "$source_package=$source_version" >&2)
dsc=$(ls "$download"/*.dsc)
rm -rf "$tree"
dpkg-source --no-check -x "$dsc" "$tree" >&2
[ -d "$tree/src" ] || { log "unpacked $dsc but found no src/ in $tree"; exit 1; }
# The tarballs are not needed once unpacked (dpkg-source also leaves a copy
# of the upstream one next to the tree).
rm -rf "$download" "$apt_dir/cache" "$dir"/*.orig.tar.*
echo "$source_package $source_version" > "$stamp"
echo "$tree"
