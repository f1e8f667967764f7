// Local paths as the OS means them (include/zarrpp/store/local_path.hpp).
#include "zarrpp/store/local_path.hpp"

#include <algorithm>
#include <cctype>

namespace fs = std::filesystem;

namespace zarrpp {

fs::path os_path(const fs::path& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  // Up to the last "..": the OS walks it through the symbolic links before it; the rest is text.
  fs::path head, tail;
  bool after_last = false;
  std::size_t left = static_cast<std::size_t>(std::count(abs.begin(), abs.end(), fs::path("..")));
  for (const auto& part : abs) {
    if (after_last) {
      tail /= part;
      continue;
    }
    head /= part;
    if (part == ".." && --left == 0) after_last = true;
  }
  if (!after_last) return abs.lexically_normal();
  // Where the OS cannot walk to the last ".." (a part before it is missing, or a dangling link),
  // the path stays as written: using it fails as the OS fails, never reaches another folder.
  if (!fs::exists(head, ec)) return abs;
  const fs::path walked = fs::canonical(head, ec);
  return ((ec ? head : walked) / tail).lexically_normal();
}

namespace {

bool names_zip_file(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".zip";
}

}  // namespace

std::optional<ZipPath> find_zip_path(const fs::path& path, bool allow_new) {
  fs::path archive = os_path(path);
  if (archive.filename().empty()) archive = archive.parent_path();  // "data.zip/"
  std::vector<fs::path> missing;                                    // the parts that do not exist, outermost first
  std::error_code ec;
  // One stat per part: whether it exists and, for the first that does, what it is.
  auto status = fs::status(archive, ec);
  while (!archive.empty() && archive != archive.root_path() && !fs::exists(status)) {
    missing.insert(missing.begin(), archive.filename());
    archive = archive.parent_path();
    status = fs::status(archive, ec);
  }
  ZipPath z;
  if (allow_new && !missing.empty() && fs::is_directory(status)) {
    const auto at = std::find_if(missing.begin(), missing.end(), names_zip_file);
    if (at == missing.end()) return std::nullopt;
    for (auto part = missing.begin(); part != at; ++part) {
      archive /= *part;
      z.missing_dirs.push_back(archive);
    }
    archive /= *at;
    missing.erase(missing.begin(), at + 1);
    z.new_archive = true;
  } else if (!fs::is_regular_file(status)) {
    return std::nullopt;
  }
  fs::path inner;
  for (const auto& part : missing) inner /= part;
  z.archive = archive;
  z.inner = inner.generic_string();
  return z;
}

}  // namespace zarrpp
