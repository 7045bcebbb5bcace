// The folder view of a ready revision: models/<hex>/<path> for every file of its manifest, each a
// HARD LINK to the file's blob, files 0444 and folders 0555.
//
// Why hard links: the CSI plugin (node-agent/csi) bind-mounts a view into serving containers,
// where a symlink to blobs/ would point at a path that does not exist inside the container. A
// hard link is the blob itself (same inode), so the container sees regular files at their
// manifest paths, nothing is copied, and a blob shared by two revisions is still stored once.
// Views and blobs are both under the cache root, so they are on one filesystem. World-readable
// because the serving container runs as any uid; read-only because nothing may change a
// verified byte through a view.
//
// A view in use must never be rebuilt under a mount: removing its links would empty the
// container's folder. So the store checks a view (ViewMatches) and rebuilds only one that is
// missing or wrong (an older layout of symlinks, a crash half way, a hand edit).
//
// Thread safety: free functions; the store serialises calls for one revision.
#pragma once

#include <filesystem>

#include "core/error/error.h"
#include "node-agent/store/revision_manifest.h"
#include "node-agent/store/store_layout.h"

namespace modelplane::agent {

inline constexpr unsigned kViewFileMode = 0444;
inline constexpr unsigned kViewFolderMode = 0555;

// Builds the view beside the models folder and renames it into place (replacing what was there),
// so a reader never sees half a view. Every blob the manifest names must be published.
[[nodiscard]] core::Status BuildRevisionView(const StoreLayout& layout,
                                             const RevisionManifest& manifest);

// True when models/<hex> holds exactly the manifest's files, each a link to its blob (same
// inode) with the view's modes, and nothing else.
[[nodiscard]] bool ViewMatches(const StoreLayout& layout, const RevisionManifest& manifest);

// Removes a folder tree the way the store writes it: read-only folders are made writable first
// (without that a non-root owner cannot unlink inside them). Never throws; a missing path is fine.
void RemoveTree(const std::filesystem::path& path);

}  // namespace modelplane::agent
