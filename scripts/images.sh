#!/usr/bin/env bash
# Builds one OCI image archive per modelplane binary without a container daemon, and checks them.
# Each image is two layers: a minimal Debian 12 root filesystem made by mmdebstrap's extract
# variant from only the packages that own the binary's shared libraries (plus CA certificates,
# netbase and base-files; coreutils for the node agent's chown init container), with no shell
# and no package manager; then the binary, debug info stripped, in /usr/local/bin. umoci
# assembles them into build/images/<image>-<version>-<commit>.oci.tar. The same inputs (the
# binary, the Debian package versions, the commit) give the same digests. docs/images.md.
#
# Usage: scripts/images.sh [--check] [--verify-reproducible] [--refresh-base] [IMAGE...]
#   (no option)            build the images (all three, or the IMAGEs named)
#   --check                validate the archives of this version and commit as OCI, and run
#                          each binary's --help inside its own root filesystem
#   --verify-reproducible  build, then build again into a scratch folder with the base made
#                          afresh from the mirror, and compare the manifest digests
#   --refresh-base         remake the cached base root filesystems from the mirror
# Environment:
#   MODELPLANE_BUILD       folder holding the built binaries (<build>/operator/modelplane-operator
#                          ...); default build/release, configured and built here when missing
#   MODELPLANE_DEBIAN_MIRROR, MODELPLANE_DEBIAN_SECURITY_MIRROR   Debian mirrors
#                          (http://deb.debian.org/debian, http://deb.debian.org/debian-security)
#   MODELPLANE_IMAGES_OUT  where the archives go (default build/images; cache/ below it)
# Runs as root on Debian 12 (the machine that built the binaries); installs mmdebstrap and umoci.
set -euo pipefail
umask 022
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)

all_images=(modelplane-operator modelplane-scheduler-extender modelplane-node-agent)
declare -A image_folder=(
  [modelplane-operator]=operator
  [modelplane-scheduler-extender]=scheduler-extender
  [modelplane-node-agent]=node-agent
)
# The chart's default ports (values.yaml); EXPOSE is documentation only.
declare -A image_ports=(
  [modelplane-operator]="9090/tcp 9443/tcp"
  [modelplane-scheduler-extender]="8888/tcp 9090/tcp"
  [modelplane-node-agent]="8444/tcp 9090/tcp"
)
# Packages no library asks for: the trust store for object stores and other HTTPS sources
# (ca-certificates, with openssl's /usr/lib/ssl/cert.pem link to it), /etc/services and
# /etc/protocols (netbase), /etc/os-release for scanners (base-files). The chart's
# prepare-cache-root init container runs `chown` from the node agent's image (coreutils).
common_packages=(base-files ca-certificates netbase)
declare -A image_packages=([modelplane-node-agent]=coreutils)
# Dependencies that exist only to run maintainer scripts (debconf's perl, base-files' awk).
# The extract variant runs none, so their files are removed from the base.
pruned_packages=(debconf mawk perl-base)
# Bump when the way a base is made changes, so cached bases are remade.
base_recipe=1
suite=bookworm
mirror=${MODELPLANE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${MODELPLANE_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
user_id=65532
source_url=https://github.com/modelplane/modelplane

mode=build
refresh_base=0
images=()
while (($#)); do
  case $1 in
    --check) mode=check ;;
    --verify-reproducible) mode=reproduce ;;
    --refresh-base) refresh_base=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    modelplane-*)
      [[ -n ${image_folder[$1]:-} ]] || { echo "images: unknown image $1" >&2; exit 2; }
      images+=("$1")
      ;;
    *) echo "usage: $0 [--check] [--verify-reproducible] [--refresh-base] [IMAGE...]" >&2; exit 2 ;;
  esac
  shift
done
((${#images[@]})) || images=("${all_images[@]}")

out=${MODELPLANE_IMAGES_OUT:-$root/build/images}
version=$(sed -n 's/.*kModelplaneVersion = "\([^"]*\)".*/\1/p' "$root/core/runtime/component_main.h")
[[ -n $version ]] || { echo "images: no kModelplaneVersion in core/runtime/component_main.h" >&2; exit 1; }
chart_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/modelplane/Chart.yaml")
[[ $chart_version == "$version" ]] ||
  echo "images: warning: Chart.yaml appVersion $chart_version is not the binaries' version $version" >&2
commit=$(git -C "$root" rev-parse HEAD)
short_commit=$(git -C "$root" rev-parse --short HEAD)
# Every time in an image comes from the last commit (the base layer's from its packages).
epoch=$(git -C "$root" log -1 --format=%ct)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
tag=$version-$short_commit
# A binary built from uncommitted sources would carry a commit that does not describe it.
if ! git -C "$root" diff --quiet HEAD -- CMakeLists.txt cmake core operator scheduler-extender \
  node-agent; then
  tag=$tag-dirty
  echo "images: warning: uncommitted changes in the sources; tagging $tag" >&2
fi

# Scratch folders, removed on exit. Functions that make one set a global rather than print,
# since a $(...) subshell would lose the list.
temp_dirs=()
cleanup() { ((${#temp_dirs[@]} == 0)) || rm -rf "${temp_dirs[@]}"; }
trap cleanup EXIT
make_temp_dir() { # parent; sets temp_dir
  mkdir -p "$1"
  temp_dir=$(mktemp -d "$1/tmp.XXXXXX")
  temp_dirs+=("$temp_dir")
}

# Deterministic tar: sorted names, fixed pax header names, no atime/ctime, numeric owners.
deterministic_tar() { # mtime source-folder archive [more tar options]
  local mtime=$1 source=$2 archive=$3
  shift 3
  tar -C "$source" --sort=name --format=posix --numeric-owner --mtime="@$mtime" \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime "$@" -cf "$archive" .
}

install_tools() {
  local -A package_of=([mmdebstrap]=mmdebstrap [umoci]=umoci [objcopy]=binutils
    [python3]=python3 [dpkg-deb]=dpkg [ldd]=libc-bin)
  local missing=() command
  for command in "${!package_of[@]}"; do
    command -v "$command" >/dev/null || missing+=("${package_of[$command]}")
  done
  ((${#missing[@]})) || return 0
  echo "images: installing Debian packages: ${missing[*]}"
  # A third-party source that cannot be reached must not stop the install from Debian's.
  apt-get update -qq || echo "images: warning: apt-get update reported errors; going on" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
}

# Where the binaries are; configures and builds build/release when MODELPLANE_BUILD is unset.
binaries_folder() {
  local build=${MODELPLANE_BUILD:-}
  local targets=() name
  for name in "${images[@]}"; do targets+=("$name"); done
  if [[ -z $build ]]; then
    build=$root/build/release
    echo "images: building ${targets[*]} in $build" >&2
    "$root/scripts/release-build.sh" "$build" "${targets[@]}" >&2
  fi
  for name in "${images[@]}"; do
    [[ -x $build/${image_folder[$name]}/$name ]] ||
      { echo "images: no binary $build/${image_folder[$name]}/$name" >&2; exit 1; }
  done
  printf '%s\n' "$build"
}

# The Debian packages that own the shared libraries a binary loads (ldd, then dpkg -S; with
# merged /usr a library may be recorded under /lib or /usr/lib).
library_packages() { # binary
  local path candidate owner found
  ldd "$1" | awk '/not found/ {print "missing:" $1; next}
                  $2 == "=>" && $3 ~ /^\// {print $3; next}
                  $1 ~ /^\// {print $1}' |
    while read -r path; do
      if [[ $path == missing:* ]]; then
        echo "images: $1 needs ${path#missing:}, which is not on this machine" >&2
        exit 1
      fi
      found=
      for candidate in "$path" "/usr$path" "$(readlink -f "$path")" \
        "$(readlink -f "$path" | sed 's#^/usr/#/#')"; do
        if owner=$(dpkg -S "$candidate" 2>/dev/null | head -n 1); then
          printf '%s\n' "${owner%%:*}"
          found=1
          break
        fi
      done
      [[ -n $found ]] || { echo "images: no Debian package owns $path" >&2; exit 1; }
    done | sort -u
}

# Makes (or reuses) the cached base root filesystem for one package set: $1/base-<key>.tar,
# base-<key>.packages (name version per line) and base-<key>.epoch. Sets base_path.
base_tarball() { # cache-folder package...
  local cache=$1
  shift
  local packages=("$@") key
  key=$(printf '%s\n' "recipe $base_recipe" "$suite" "$mirror" "$security_mirror" \
    "prune ${pruned_packages[*]}" "${packages[@]}" | sha256sum | cut -c1-16)
  local tarball=$cache/base-$key.tar
  base_path=$tarball
  if [[ -f $tarball && $refresh_base -eq 0 ]]; then
    echo "images: reusing base $key ($tarball)"
    return
  fi
  make_temp_dir "$cache"
  local work=$temp_dir started=$SECONDS
  local rootfs=$work/rootfs
  echo "images: making base $key: Debian $suite, extract variant, ${packages[*]}"
  # Merged /usr as in Debian 12, made here because the extract variant runs no usrmerge. The
  # hook is mmdebstrap's to expand ($1: the new root).
  # shellcheck disable=SC2016
  SOURCE_DATE_EPOCH=$epoch mmdebstrap --quiet --variant=extract --format=directory \
    --include="$(IFS=,; printf '%s' "${packages[*]}")" --skip=cleanup/apt/cache \
    --setup-hook='for d in bin sbin lib lib64; do mkdir -p "$1/usr/$d"; ln -s "usr/$d" "$1/$d"; done' \
    "$suite" "$rootfs" "deb $mirror $suite main" "deb $mirror $suite-updates main" \
    "deb $security_mirror $suite-security main"

  local deb name kept_debs=() pruned=" ${pruned_packages[*]} "
  for deb in "$rootfs"/var/cache/apt/archives/*.deb; do
    name=$(dpkg-deb -f "$deb" Package)
    if [[ $pruned == *" $name "* ]]; then
      # Files first, then the folders they leave empty. A folder entry that is a symlink here
      # (bin/, lib/: merged /usr) is never touched.
      local entry dirs=()
      while read -r entry; do
        entry=${entry#./}
        [[ -n $entry ]] || continue
        if [[ $entry == */ ]]; then
          dirs+=("${entry%/}")
        else
          rm -f "${rootfs:?}/$entry"
        fi
      done < <(dpkg-deb --fsys-tarfile "$deb" | tar -t)
      printf '%s\n' "${dirs[@]}" | sort -r | while read -r entry; do
        [[ -L $rootfs/$entry || ! -d $rootfs/$entry ]] || rmdir --ignore-fail-on-non-empty "$rootfs/$entry"
      done
    else
      kept_debs+=("$deb")
    fi
  done

  # The base's time: the newest file in its packages, so the layer does not change with the
  # commit and the operator and extender images share it.
  local base_epoch
  base_epoch=$(python3 - "${kept_debs[@]}" <<'EOF'
import subprocess, sys, tarfile
newest = 0
for deb in sys.argv[1:]:
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE) as proc:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as archive:
            for member in archive:
                newest = max(newest, int(member.mtime))
print(newest)
EOF
  )

  # A dpkg status file (no maintainer scripts ran, so none exists) lets scanners see what is in
  # the image; nothing here runs dpkg.
  mkdir -p "$work/status"
  for deb in "${kept_debs[@]}"; do
    name=$(dpkg-deb -f "$deb" Package)
    { printf 'Package: %s\nStatus: install ok installed\n' "$name"
      dpkg-deb -f "$deb" | grep -v '^Package:'
      printf '\n'; } >"$work/status/$name"
    printf '%s %s\n' "$name" "$(dpkg-deb -f "$deb" Version)" >>"$work/packages"
  done

  # What only apt, dpkg or a person reads; the copyright files stay.
  rm -rf "${rootfs:?}"/{dev,etc/apt,etc/debconf.conf,etc/fstab,etc/hostname,etc/resolv.conf} \
    "$rootfs"/var/{cache,lib/apt,lib/dpkg,log} \
    "$rootfs"/usr/share/{bash-completion,bug,doc-base,gcc,gdb,info,lintian,locale,man,menu}
  find "$rootfs/usr/share/doc" -mindepth 1 \( -type f -o -type l \) ! -name copyright -delete
  # Scripts whose interpreter the image lacks (update-ca-certificates, c_rehash, motd) can
  # never run in it.
  python3 - "$rootfs" <<'EOF'
import os, sys
root = sys.argv[1]
def present(path):
    return os.path.exists(os.path.join(root, path.lstrip("/")))
for folder, _, names in os.walk(root):
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as script:
            line = script.readline(256)
        if not line.startswith(b"#!"):
            continue
        words = line[2:].decode(errors="replace").split() or [""]
        interpreter = words[0]
        if os.path.basename(interpreter) == "env" and len(words) > 1 and present(interpreter):
            interpreter = "/usr/bin/" + words[1]
        if not interpreter or not present(interpreter):
            os.remove(path)
            print(f"images: removed {os.path.relpath(path, root)} (needs {interpreter})")
EOF
  # Empty folders go, except the targets of the merged-/usr links.
  find "$rootfs" -depth -mindepth 1 -type d -empty ! -path "$rootfs/tmp" \
    ! -path "$rootfs/usr/bin" ! -path "$rootfs/usr/sbin" ! -path "$rootfs/usr/lib" \
    ! -path "$rootfs/usr/lib64" -delete
  mkdir -p "$rootfs"/{dev,proc,sys,tmp,var/lib/dpkg,etc/ssl/certs}
  chmod 1777 "$rootfs/tmp"
  cat "$work"/status/* >"$rootfs/var/lib/dpkg/status"
  # update-ca-certificates' bundle (its postinst never ran): every certificate the package
  # ships, in name order, each ending in a newline.
  # shellcheck disable=SC1003
  find "$rootfs/usr/share/ca-certificates" -name '*.crt' | sort |
    while read -r cert; do sed -e '$a\' "$cert"; done >"$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nmodelplane:x:%s:%s:modelplane:/nonexistent:/usr/sbin/nologin\n' \
    "$user_id" "$user_id" >"$rootfs/etc/passwd"
  printf 'root:x:0:\nmodelplane:x:%s:\n' "$user_id" >"$rootfs/etc/group"
  # glibc's default without this file tries DNS before /etc/hosts.
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n' \
    >"$rootfs/etc/nsswitch.conf"

  deterministic_tar "$base_epoch" "$rootfs" "$tarball.tmp"
  sort "$work/packages" >"$cache/base-$key.packages"
  printf '%s\n' "$base_epoch" >"$cache/base-$key.epoch"
  mv "$tarball.tmp" "$tarball"
  rm -rf "$work"
  echo "images: made base $key in $((SECONDS - started)) s:" \
    "$(wc -l <"$cache/base-$key.packages") packages, $(du -h "$tarball" | cut -f1) tar"
}

manifest_digest() { # archive
  tar -xOf "$1" ./index.json | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifests"][0]["digest"])'
}

build_image() { # name binary out-folder cache-folder
  local name=$1 binary=$2 destination=$3 cache=$4 started=$SECONDS
  local libraries packages package extra pruned=" ${pruned_packages[*]} "
  libraries=$(library_packages "$binary")
  mapfile -t packages <<<"$libraries"
  for package in "${packages[@]}"; do
    [[ $pruned != *" $package "* ]] ||
      { echo "images: $name loads a library from $package, which the base prunes" >&2; exit 1; }
  done
  read -r -a extra <<<"${image_packages[$name]:-}"
  mapfile -t packages < <(printf '%s\n' "${packages[@]}" "${common_packages[@]}" "${extra[@]}" |
    sort -u)
  base_tarball "$cache" "${packages[@]}"
  local base=$base_path base_epoch base_packages
  base_epoch=$(cat "${base%.tar}.epoch")
  base_packages=$(wc -l <"${base%.tar}.packages")

  make_temp_dir "$destination"
  local work=$temp_dir
  mkdir -p "$work/binary/usr/local/bin"
  objcopy --strip-debug "$binary" "$work/binary/usr/local/bin/$name"
  chmod 0755 "$work/binary/usr/local/bin/$name"
  deterministic_tar "$epoch" "$work/binary" "$work/binary.tar" --owner=0 --group=0

  local layout=$work/layout image
  image=$layout:$tag
  umoci init --layout "$layout"
  umoci new --image "$image"
  umoci raw add-layer --image "$image" --history.created="$(date -u -d "@$base_epoch" +%Y-%m-%dT%H:%M:%SZ)" \
    --history.created_by="scripts/images.sh: Debian $suite base, $base_packages packages ($(basename "$base"))" \
    "$base"
  umoci raw add-layer --image "$image" --history.created="$created" \
    --history.created_by="scripts/images.sh: /usr/local/bin/$name (objcopy --strip-debug)" \
    "$work/binary.tar"
  local config=(--no-history --created="$created" --architecture=amd64 --os=linux
    --config.user="$user_id:$user_id" --config.entrypoint="/usr/local/bin/$name"
    --config.workingdir=/ --config.env=PATH=/usr/local/bin:/usr/bin)
  local ports port pair label
  read -r -a ports <<<"${image_ports[$name]}"
  for port in "${ports[@]}"; do config+=(--config.exposedports="$port"); done
  for pair in title=$name version=$version revision=$commit created=$created \
    source=$source_url licenses=Apache-2.0; do
    label=org.opencontainers.image.$pair
    config+=(--config.label="$label" --manifest.annotation="$label")
  done
  umoci config --image "$image" "${config[@]}"
  umoci gc --layout "$layout"

  local archive=$destination/$name-$tag.oci.tar
  deterministic_tar "$epoch" "$layout" "$archive.tmp" --owner=0 --group=0 --mode=u=rwX,go=rX
  mv "$archive.tmp" "$archive"
  echo "images: built $archive in $((SECONDS - started)) s"
  echo "images:   manifest $(manifest_digest "$archive"), archive $(du -h "$archive" | cut -f1)," \
    "binary $(du -h "$work/binary/usr/local/bin/$name" | cut -f1) stripped" \
    "($(du -h "$binary" | cut -f1) built), base $(basename "$base")"
}

# Validates one archive as an OCI image layout and checks what the image promises.
check_layout() { # layout name
  python3 - "$1" "$2" "$tag" "$version" "$user_id" <<'EOF'
import gzip, hashlib, io, json, os, sys, tarfile
layout, name, tag, version, user = sys.argv[1:6]
problems = []
def fail(message):
    problems.append(message)
def read_blob(descriptor, referenced):
    algorithm, hex_digest = descriptor["digest"].split(":", 1)
    path = os.path.join(layout, "blobs", algorithm, hex_digest)
    with open(path, "rb") as blob:
        data = blob.read()
    if algorithm != "sha256" or hashlib.sha256(data).hexdigest() != hex_digest:
        fail(f"blob {descriptor['digest']}: content does not match its digest")
    if len(data) != descriptor["size"]:
        fail(f"blob {descriptor['digest']}: {len(data)} bytes, descriptor says {descriptor['size']}")
    referenced.add(hex_digest)
    return data
with open(os.path.join(layout, "oci-layout")) as f:
    if json.load(f).get("imageLayoutVersion") != "1.0.0":
        fail("oci-layout: imageLayoutVersion is not 1.0.0")
with open(os.path.join(layout, "index.json")) as f:
    index = json.load(f)
referenced = set()
manifests = index.get("manifests", [])
if index.get("schemaVersion") != 2 or len(manifests) != 1:
    fail("index.json: want schemaVersion 2 and exactly one manifest")
descriptor = manifests[0]
if descriptor.get("annotations", {}).get("org.opencontainers.image.ref.name") != tag:
    fail(f"index.json: the manifest's ref.name is not {tag}")
if descriptor["mediaType"] != "application/vnd.oci.image.manifest.v1+json":
    fail("index.json: not an OCI image manifest")
manifest = json.loads(read_blob(descriptor, referenced))
if manifest.get("schemaVersion") != 2 or \
        manifest["config"]["mediaType"] != "application/vnd.oci.image.config.v1+json":
    fail("manifest: want schemaVersion 2 and an OCI image config")
config = json.loads(read_blob(manifest["config"], referenced))
if (config.get("architecture"), config.get("os")) != ("amd64", "linux"):
    fail("config: not linux/amd64")
process = config.get("config", {})
if process.get("User") != f"{user}:{user}":
    fail(f"config: User is {process.get('User')!r}, not {user}:{user}")
if process.get("Entrypoint") != [f"/usr/local/bin/{name}"]:
    fail(f"config: Entrypoint is {process.get('Entrypoint')!r}")
if process.get("Labels", {}).get("org.opencontainers.image.version") != version:
    fail("config: the version label is not " + version)
diff_ids = config.get("rootfs", {}).get("diff_ids", [])
layers = manifest.get("layers", [])
if len(diff_ids) != len(layers):
    fail(f"config: {len(diff_ids)} diff_ids for {len(layers)} layers")
history = [entry for entry in config.get("history", []) if not entry.get("empty_layer")]
if len(history) != len(layers):
    fail(f"config: {len(history)} history entries for {len(layers)} layers")
compressed_total = uncompressed_total = 0
for number, (layer, diff_id) in enumerate(zip(layers, diff_ids)):
    if layer["mediaType"] != "application/vnd.oci.image.layer.v1.tar+gzip":
        fail(f"layer {number}: media type {layer['mediaType']}")
    try:
        data = gzip.decompress(read_blob(layer, referenced))
    except (OSError, EOFError) as error:
        fail(f"layer {number}: not gzip: {error}")
        continue
    if "sha256:" + hashlib.sha256(data).hexdigest() != diff_id:
        fail(f"layer {number}: uncompressed digest is not diff_id {diff_id}")
    # Reading every member to the end catches a layer without its tar trailer (umoci 0.4.7's
    # own layer writer leaves it out, which GNU tar and scanners refuse).
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            entries = sum(1 for _ in archive)
    except tarfile.TarError as error:
        fail(f"layer {number}: not a complete tar archive: {error}")
        entries = 0
    compressed_total += layer["size"]
    uncompressed_total += len(data)
    print(f"images:   layer {number} {layer['digest'][:19]}: {layer['size'] / 2**20:.1f} MiB gzip, "
          f"{len(data) / 2**20:.1f} MiB tar, {entries} entries")
stored = set(os.listdir(os.path.join(layout, "blobs", "sha256")))
if stored != referenced:
    fail(f"blobs: {len(stored - referenced)} stored but not referenced, "
         f"{len(referenced - stored)} referenced but missing")
print(f"images:   manifest {descriptor['digest']}: {compressed_total / 2**20:.1f} MiB compressed, "
      f"{uncompressed_total / 2**20:.1f} MiB uncompressed layers")
for problem in problems:
    print(f"images:   FAILED {problem}")
sys.exit(1 if problems else 0)
EOF
}

# Unpacks the image with umoci and runs its binary in that root filesystem as the image's user.
check_image() { # name
  local name=$1 archive=$out/$1-$tag.oci.tar
  [[ -f $archive ]] || { echo "images: FAILED no archive $archive" >&2; return 1; }
  echo "images: checking $archive"
  make_temp_dir "$out"
  local work=$temp_dir failed=0
  mkdir "$work/layout"
  tar -C "$work/layout" -xf "$archive"
  # Nothing below is worth running on a layout that does not hold together.
  check_layout "$work/layout" "$name" || return 1
  if command -v skopeo >/dev/null; then
    # A second reader (containers/image, what skopeo copy and podman use) must agree.
    local seen
    seen=$(skopeo inspect --format '{{.Digest}}' "oci-archive:$archive" 2>&1) || true
    if [[ $seen == "$(manifest_digest "$archive")" ]]; then
      echo "images:   skopeo inspect: same manifest digest"
    else
      echo "images:   FAILED skopeo inspect: $seen"
      failed=1
    fi
  fi
  if ! umoci unpack --image "$work/layout:$tag" "$work/bundle" >/dev/null; then
    echo "images:   FAILED umoci unpack"
    return 1
  fi
  local rootfs=$work/bundle/rootfs
  python3 - "$work/bundle/config.json" "$name" "$user_id" <<'EOF' || failed=1
import json, sys
path, name, user = sys.argv[1], sys.argv[2], int(sys.argv[3])
process = json.load(open(path))["process"]
if (process["user"]["uid"], process["user"]["gid"]) != (user, user) or \
        process["args"] != [f"/usr/local/bin/{name}"]:
    print(f"images:   FAILED umoci's runtime config: user {process['user']}, args {process['args']}")
    sys.exit(1)
EOF
  echo "images:   unpacked rootfs $(du -sh --apparent-size "$rootfs" | cut -f1)" \
    "($(du -sh --apparent-size "$rootfs/usr/local/bin/$name" | cut -f1) of it the binary)," \
    "$(grep -c 'BEGIN CERTIFICATE' "$rootfs/etc/ssl/certs/ca-certificates.crt") CA certificates"
  local shell
  for shell in sh bash dash busybox; do
    if [[ -e $rootfs/usr/bin/$shell || -L $rootfs/usr/bin/$shell ]]; then
      echo "images:   FAILED the image has a shell: /usr/bin/$shell"
      failed=1
    fi
  done
  local chroot_command
  chroot_command=$(command -v chroot)
  local in_image=(env -i PATH=/usr/local/bin:/usr/bin "$chroot_command" --userspec="$user_id:$user_id"
    "$rootfs")
  # The dynamic loader resolves every library before main, so this proves they are all there.
  local help
  if help=$("${in_image[@]}" "/usr/local/bin/$name" --help 2>&1); then
    echo "images:   $name --help as $user_id:$user_id: exit 0, $(wc -l <<<"$help") lines: $(head -n 1 <<<"$help")"
  else
    echo "images:   FAILED $name --help as $user_id:$user_id exited $?: $(head -n 3 <<<"$help")"
    failed=1
  fi
  local reported
  reported=$("${in_image[@]}" "/usr/local/bin/$name" --version 2>&1 || true)
  [[ $reported == *"$version"* ]] ||
    { echo "images:   FAILED $name --version says '$reported', not $version"; failed=1; }
  if [[ -n ${image_packages[$name]:-} ]]; then
    # The prepare-cache-root init container's command, as root like there.
    if ! env -i "$chroot_command" "$rootfs" /usr/bin/chown --version >/dev/null; then
      echo "images:   FAILED chown does not run in the image"
      failed=1
    fi
  fi
  ((failed == 0)) && echo "images:   ok"
  return "$failed"
}

# mmdebstrap's root mode is the one whose directory output keeps the files' owners,
# and the checks chroot into the images.
[[ $(id -u) -eq 0 ]] || { echo "images: run as root (mmdebstrap root mode, chroot)" >&2; exit 1; }
install_tools
mkdir -p "$out/cache"
case $mode in
  build)
    build=$(binaries_folder)
    for name in "${images[@]}"; do
      build_image "$name" "$build/${image_folder[$name]}/$name" "$out" "$out/cache"
    done
    ;;
  check)
    failures=0
    for name in "${images[@]}"; do check_image "$name" || failures=$((failures + 1)); done
    ((failures == 0)) || { echo "images: $failures image(s) failed the checks" >&2; exit 1; }
    ;;
  reproduce)
    build=$(binaries_folder)
    make_temp_dir "$out"
    scratch=$temp_dir
    different=0
    for name in "${images[@]}"; do
      build_image "$name" "$build/${image_folder[$name]}/$name" "$out" "$out/cache"
      # The second build makes its base afresh from the mirror in an empty cache.
      build_image "$name" "$build/${image_folder[$name]}/$name" "$scratch" "$scratch/cache"
      first=$(manifest_digest "$out/$name-$tag.oci.tar")
      second=$(manifest_digest "$scratch/$name-$tag.oci.tar")
      if [[ $first == "$second" ]] && cmp -s "$out/$name-$tag.oci.tar" "$scratch/$name-$tag.oci.tar"; then
        echo "images: $name reproduced: manifest $first, archives byte-identical"
      else
        echo "images: $name NOT reproduced: manifest $first, then $second"
        for packages in "$scratch"/cache/base-*.packages; do
          diff "$out/cache/$(basename "$packages")" "$packages" || true
        done
        different=1
      fi
    done
    exit "$different"
    ;;
esac
