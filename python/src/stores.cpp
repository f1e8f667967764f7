// Stores: memory, local, zip, HTTP, S3 and mapping stores, with the primitives zarrpp.storage
// builds zarr-python's store methods from.
#include "bindings.hpp"
#include "mapping_store.hpp"
#include "zarrpp/store/url.hpp"

namespace zarrpp_python {

std::string memory_repr(const zarrpp::Store& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "MemoryStore('memory://%p')", static_cast<const void*>(&s));
  return buf;
}

// A store value as bytes, whole or a range of it: kind "all", "range" ([a, b)), "offset" (from a)
// or "suffix" (the last a bytes); None when the key does not exist.
py::object store_get(zarrpp::Store& s, const std::string& key, const std::string& kind, std::uint64_t a,
                     std::uint64_t b) {
  zarrpp::ByteRange range;
  if (kind == "range") {
    if (b < a)
      throw zarrpp::ArgumentError("byte range: end " + std::to_string(b) + " before start " + std::to_string(a));
    range = zarrpp::ByteRange::range(a, b - a);
  } else if (kind == "offset") {
    range = zarrpp::ByteRange::from(a);
  } else if (kind == "suffix") {
    range = zarrpp::ByteRange::last(a);
  } else if (kind != "all") {
    throw zarrpp::ArgumentError("byte range: unknown kind '" + kind + "'");
  }
  auto v = without_gil([&] { return s.get(key, range); });
  if (!v) return py::none();
  return py::bytes(reinterpret_cast<const char*>(v->data()), v->size());
}

// The store at an s3:// or http(s):// URL with fsspec-style storage_options (or the AWS_*
// environment variables, as the C++ stores read them).
zarrpp::StorePtr open_remote(const std::string& url, const py::dict& options, bool read_only) {
  zarrpp::OpenStoreOptions o;
  o.s3.read_only = read_only;
  o.azure.read_only = read_only;
  o.gcs.read_only = read_only;
  o.file.read_only = read_only;
  auto text = [](const py::handle& v, const std::string& k) {
    if (!py::isinstance<py::str>(v)) throw zarrpp::ArgumentError("storage_options: '" + k + "' must be a string");
    return v.cast<std::string>();
  };
  for (const auto& [kh, v] : options) {
    const std::string k = py::str(kh);
    if (k == "endpoint_url" || k == "endpoint")
      o.s3.endpoint = o.azure.endpoint = o.gcs.endpoint = text(v, k);
    else if (k == "account_name")  // Azure, as adlfs spells them
      o.azure.account_name = text(v, k);
    else if (k == "account_key")
      o.azure.account_key = text(v, k);
    else if (k == "sas_token")
      o.azure.sas_token = text(v, k);
    else if (k == "connection_string")
      o.azure.connection_string = text(v, k);
    else if (k == "account_host")
      o.azure.endpoint = "https://" + text(v, k);
    else if (k == "region" || k == "region_name")
      o.s3.region = text(v, k);
    else if (k == "key" || k == "access_key_id" || k == "aws_access_key_id")
      o.s3.access_key_id = o.gcs.hmac_key_id = text(v, k);
    else if (k == "secret" || k == "secret_access_key" || k == "aws_secret_access_key")
      o.s3.secret_access_key = o.gcs.hmac_secret = text(v, k);
    else if (k == "token" || k == "session_token" || k == "aws_session_token")
      o.s3.session_token = text(v, k);
    else if (k == "anon") {
      if (!py::isinstance<py::bool_>(v)) throw zarrpp::ArgumentError("storage_options: 'anon' must be True or False");
      o.s3.anonymous = o.azure.anonymous = o.gcs.anonymous = v.cast<bool>();
    } else if (k == "headers") {
      if (!py::isinstance<py::dict>(v))
        throw zarrpp::ArgumentError("storage_options: 'headers' must be a dict of str -> str");
      for (const auto& [hk, hv] : v.cast<py::dict>())
        o.http.headers.emplace_back(text(hk, "headers"), text(hv, "headers"));
    } else if (zarrpp::RemoteOptions::is_option(k)) {
      // Network bounds (seconds; max_attempts a count), checked by the C++ rules the CLI uses.
      if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
        throw zarrpp::ArgumentError("storage_options: '" + k + "' must be a number");
      const double x = v.cast<double>();
      try {
        o.s3.net.set(k, x);
        o.http.net.set(k, x);
        o.azure.net.set(k, x);
        o.gcs.net.set(k, x);
      } catch (const zarrpp::ArgumentError& e) {
        throw zarrpp::ArgumentError(std::string("storage_options: ") + e.what());
      }
    } else {
      std::string names =
          "endpoint_url, region, key, secret, token, anon, headers, account_name, account_key, sas_token, "
          "connection_string, account_host";
      for (const auto& n : zarrpp::RemoteOptions::option_names()) names += ", " + n;
      throw zarrpp::ArgumentError("storage_options: unknown option '" + k + "' (zarrpp takes " + names + ")");
    }
  }
  py::gil_scoped_release nogil;
  try {
    return zarrpp::open_store(url, o);
  } catch (const zarrpp::StoreError& e) {
    // Opening makes no request: what fails here is the URL or an option (a ValueError).
    throw zarrpp::ArgumentError(e.what());
  }
}

// A remote store of type S made from a URL (a Python subclass's __init__): a URL of another kind is
// refused, naming the class that takes it.
template <class S>
std::shared_ptr<S> remote_of(const std::string& url, const py::dict& options, bool read_only, const char* scheme) {
  auto s = std::dynamic_pointer_cast<S>(open_remote(url, options, read_only));
  if (!s) throw zarrpp::ArgumentError(std::string("'") + url + "' is not a " + scheme + " URL");
  return s;
}

// Stores: memory, local, HTTP, S3, and opening one by URL.
void bind_stores(py::module_& m) {
  // ---- stores ----
  // The primitives zarrpp.storage builds zarr-python's store methods from (storage.py).
  py::class_<zarrpp::Store, std::shared_ptr<zarrpp::Store>>(
      m, "Store",
      "The base of every store: keys to byte values, with zarr-python's store methods (get, set, "
      "delete, exists, list, ...). Open one with LocalStore, MemoryStore, ZipStore or a URL.")
      .def("describe", &zarrpp::Store::describe,
           "A short description for messages (\"file:///data/x.zarr\", \"memory\").")
      .def("_location", &zarrpp::Store::location)
      .def_property_readonly(
          "read_only", [](const zarrpp::Store& s) { return !s.capabilities().writable; }, "Whether writes are refused.")
      .def_property_readonly(
          "supports_listing", [](const zarrpp::Store& s) { return s.capabilities().listing; },
          "Whether the store can list its keys.")
      .def_property_readonly(
          "supports_conditional_writes",
          [](zarrpp::Store& s) { return without_gil([&] { return s.confirm_capabilities().conditional_writes; }); },
          "Whether a write can be conditioned on what is stored (so a chunk written in part by two "
          "writers keeps both parts); an S3 store asks its server once.")
      .def("_get", &store_get, "key"_a, "kind"_a = "all", "a"_a = 0, "b"_a = 0,
           "The value of `key` (kind all; range [a, b); from offset a; suffix: the last a bytes) or None.")
      .def(
          "_set",
          [](zarrpp::Store& s, const std::string& key, const py::buffer& value, bool if_absent) {
            const py::buffer_info info = value.request();
            const auto* p = static_cast<const std::uint8_t*>(info.ptr);
            zarrpp::Bytes v(p, p + info.size * info.itemsize);
            return without_gil([&] {
              return if_absent ? s.set(key, v, zarrpp::WriteOptions::if_equal(std::nullopt)) : s.set(key, v);
            });
          },
          "key"_a, "value"_a, "if_absent"_a = false)
      .def(
          "_exists",
          [](zarrpp::Store& s, const std::string& key) { return without_gil([&] { return s.exists(key); }); }, "key"_a)
      .def(
          "_size", [](zarrpp::Store& s, const std::string& key) { return without_gil([&] { return s.size(key); }); },
          "key"_a)
      .def(
          "_delete", [](zarrpp::Store& s, const std::string& key) { without_gil([&] { s.erase(key); }); }, "key"_a)
      .def(
          "_delete_prefix",
          [](zarrpp::Store& s, const std::string& prefix) { without_gil([&] { s.erase_prefix(prefix); }); }, "prefix"_a)
      .def(
          "_list_prefix",
          [](zarrpp::Store& s, const std::string& prefix) {
            return without_gil([&] { return s.list_prefix(prefix); });
          },
          "prefix"_a = "", "Every key starting with `prefix`, sorted.")
      .def(
          "_list_dir",
          [](zarrpp::Store& s, const std::string& prefix) {
            auto d = without_gil([&] { return s.list_dir(prefix); });
            return py::make_tuple(d.keys, d.prefixes);
          },
          "prefix"_a = "", "(keys, prefixes) directly under `prefix` (\"\" or ending in '/').");
  py::class_<zarrpp::MemoryStore, zarrpp::Store, std::shared_ptr<zarrpp::MemoryStore>>(m, "MemoryStore")
      .def(py::init([](const std::shared_ptr<zarrpp::MemoryStore>& share, bool read_only) {
             // a new store, or a view of `share`'s keys and values
             return share ? share->with_read_only(read_only) : zarrpp::MemoryStore::create()->with_read_only(read_only);
           }),
           "share"_a = nullptr, "read_only"_a = false)
      .def("_with_read_only", &zarrpp::MemoryStore::with_read_only, "read_only"_a)
      .def("_shares_data_with", &zarrpp::MemoryStore::shares_data_with, "other"_a)
      .def("__repr__", [](const zarrpp::MemoryStore& s) { return memory_repr(s); });
  // A Python mapping (zarr-python's store={}): see mapping_store.hpp.
  py::class_<zarrpp_python::MappingStore, zarrpp::Store, std::shared_ptr<zarrpp_python::MappingStore>>(
      m, "MappingStore", py::dynamic_attr())
      .def(py::init([](py::object mapping, bool read_only) {
             return std::make_shared<zarrpp_python::MappingStore>(std::move(mapping), read_only);
           }),
           "mapping"_a, "read_only"_a = false)
      .def_property_readonly("mapping", &zarrpp_python::MappingStore::mapping)
      .def("__repr__", [](const zarrpp_python::MappingStore& s) { return "MappingStore(" + s.describe() + ")"; });
  // A folder inside another store (a memory:// URL with a path), with `read_only` settable.
  py::class_<zarrpp::PrefixStore, zarrpp::Store, std::shared_ptr<zarrpp::PrefixStore>>(m, "PrefixStore",
                                                                                       py::dynamic_attr())
      .def(py::init([](const zarrpp::StorePtr& inner, const std::string& path, bool read_only) {
             return std::make_shared<zarrpp::PrefixStore>(inner, path, read_only);
           }),
           // the inner store's Python object lives as long as the view, so `inner` returns it
           "inner"_a, "path"_a, "read_only"_a = false, py::keep_alive<1, 2>())
      .def_property_readonly("inner", &zarrpp::PrefixStore::inner)
      .def_property_readonly("path", &zarrpp::PrefixStore::prefix)
      .def("__repr__", [](const zarrpp::PrefixStore& s) { return "PrefixStore('" + s.location() + "')"; });
  py::class_<zarrpp::FileStore, zarrpp::Store, std::shared_ptr<zarrpp::FileStore>>(m, "LocalStore")
      .def(py::init([](const std::filesystem::path& root, bool read_only) {
             return zarrpp::FileStore::open(root,
                                            zarrpp::FileStore::Options{.create = !read_only, .read_only = read_only});
           }),
           "root"_a, "read_only"_a = false)
      .def_property_readonly(
          "root", [](const zarrpp::FileStore& s) { return s.root(); }, "The folder the store is rooted at.")
      .def("__repr__", [](const zarrpp::FileStore& s) { return "LocalStore('" + s.root().string() + "')"; });

  // A zip file (zarr-python's ZipStore): writes are staged until commit()/close().
  py::class_<zarrpp::ZipStore, zarrpp::Store, std::shared_ptr<zarrpp::ZipStore>>(m, "ZipStore", py::dynamic_attr())
      .def(py::init([](const std::filesystem::path& path, const std::string& mode, bool deflate, double lock_timeout) {
             if (!(lock_timeout >= 0 && lock_timeout <= 1e7))
               throw zarrpp::ArgumentError(
                   "ZipStore: lock_timeout must be a number of seconds (0 or more, at most 1e7)");
             const zarrpp::ZipStore::Options o{
                 .mode = zarrpp::ZipStore::parse_mode(mode),
                 .compression =
                     deflate ? zarrpp::ZipStore::Compression::deflated : zarrpp::ZipStore::Compression::stored,
                 .lock_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(lock_timeout * 1000))};
             try {
               py::gil_scoped_release nogil;
               return zarrpp::ZipStore::open(path, o);
             } catch (const zarrpp::StoreError& e) {
               if (e.code() != zarrpp::ErrorCode::already_exists) throw;
               PyErr_SetString(PyExc_FileExistsError, e.what());  // as zipfile's mode "x"
               throw py::error_already_set();
             }
           }),
           "path"_a, "mode"_a = "r", "deflate"_a = false, "lock_timeout"_a = 60.0)
      .def(
          "commit", [](zarrpp::ZipStore& s) { without_gil([&] { s.commit(); }); },
          "Writes the staged changes into the archive; readers of the file see the old archive or the new one.")
      .def("_close", [](zarrpp::ZipStore& s) { without_gil([&] { s.close(); }); })
      .def_property_readonly("_closed", &zarrpp::ZipStore::closed)
      .def_property_readonly("_path", [](const zarrpp::ZipStore& s) { return s.path(); })
      .def("__repr__", [](const zarrpp::ZipStore& s) { return "ZipStore('" + s.path().string() + "')"; });

  // Remote stores: opened from a URL (s3://bucket/prefix, http(s)://host/path) with zarr-python's
  // fsspec-style storage_options, or the AWS_* environment variables as the C++ stores read them.
  py::class_<zarrpp::HttpStore, zarrpp::Store, std::shared_ptr<zarrpp::HttpStore>>(
      m, "HttpStore", "A read-only store over HTTP(S), from an http(s):// URL (zarrpp.storage.open_url).",
      py::dynamic_attr())
      .def(py::init([](const std::string& url, const py::dict& options, bool read_only) {
             return remote_of<zarrpp::HttpStore>(url, options, read_only, "http(s)://");
           }),
           "url"_a, "storage_options"_a = py::dict(), "read_only"_a = false)
      .def("__repr__", [](const zarrpp::HttpStore& s) { return "HttpStore('" + s.location() + "')"; });
  py::class_<zarrpp::S3Store, zarrpp::Store, std::shared_ptr<zarrpp::S3Store>>(
      m, "S3Store", "A store in an S3 bucket, from an s3:// URL and storage_options (zarrpp.storage.open_url).",
      py::dynamic_attr())
      .def(py::init([](const std::string& url, const py::dict& options, bool read_only) {
             return remote_of<zarrpp::S3Store>(url, options, read_only, "s3://");
           }),
           "url"_a, "storage_options"_a = py::dict(), "read_only"_a = false)
      .def_property_readonly("bucket", &zarrpp::S3Store::bucket, "The bucket's name.")
      .def_property_readonly("prefix", &zarrpp::S3Store::prefix, "The folder in the bucket (\"\" for its root).")
      .def_property_readonly("endpoint", &zarrpp::S3Store::endpoint, "The server's URL.")
      .def("__repr__", [](const zarrpp::S3Store& s) { return "S3Store('" + s.location() + "')"; });
  py::class_<zarrpp::AzureStore, zarrpp::Store, std::shared_ptr<zarrpp::AzureStore>>(
      m, "AzureStore",
      "A store in an Azure Blob Storage container, from an az://, abfs:// or Azure https:// URL and "
      "storage_options (zarrpp.storage.open_url).",
      py::dynamic_attr())
      .def(py::init([](const std::string& url, const py::dict& options, bool read_only) {
             return remote_of<zarrpp::AzureStore>(url, options, read_only, "az://");
           }),
           "url"_a, "storage_options"_a = py::dict(), "read_only"_a = false)
      .def_property_readonly("container", &zarrpp::AzureStore::container, "The container's name.")
      .def_property_readonly("prefix", &zarrpp::AzureStore::prefix, "The folder in the container (\"\" for its root).")
      .def_property_readonly("endpoint", &zarrpp::AzureStore::endpoint, "The blob service's URL.")
      .def_property_readonly("account", &zarrpp::AzureStore::account, "The storage account.")
      .def(
          "create_container", [](zarrpp::AzureStore& s) { return without_gil([&] { return s.create_container(); }); },
          "Creates the container; True when made, False when it was there (zarrpp never does this unasked).")
      .def("__repr__", [](const zarrpp::AzureStore& s) { return "AzureStore('" + s.location() + "')"; });
  // Where a store string points, as the core reads it for every front end (zarrpp::locate_store):
  // Python makes its own store objects from the answer.
  m.def(
      "locate_store",
      [](const std::string& text, bool new_zip_files) {
        zarrpp::StoreLocation at;
        try {
          at = zarrpp::locate_store(text, new_zip_files);
        } catch (const zarrpp::StoreError& e) {
          throw zarrpp::ArgumentError(e.what());  // the string names no store: a ValueError
        }
        static constexpr const char* kinds[] = {"directory", "zip", "memory", "http", "s3", "azure", "gcs"};
        py::dict d;
        d["kind"] = kinds[static_cast<int>(at.kind)];
        d["path"] = at.path.string();
        d["inner"] = at.inner;
        d["name"] = at.name;
        d["new_zip"] = at.new_zip;
        return d;
      },
      "text"_a, "new_zip_files"_a = false,
      "Where a store string points: {'kind': 'directory'|'zip'|'memory'|'http'|'s3'|'azure'|'gcs', 'path', "
      "'inner', "
      "'name', "
      "'new_zip'}.");
  m.def(
      "remote_class",
      [](const std::string& url, const py::dict& options) {
        const auto s = open_remote(url, options, true);  // makes no request
        if (std::dynamic_pointer_cast<zarrpp::S3Store>(s)) return "s3";
        if (std::dynamic_pointer_cast<zarrpp::AzureStore>(s)) return "azure";
        return "http";
      },
      "url"_a, "storage_options"_a = py::dict(),
      "Which store a remote URL opens as with these options: 's3', 'azure' or 'http' (a gs:// URL is either "
      "of the first and last).");
  m.def("named_memory_store", &zarrpp::MemoryStore::named, "name"_a, "The process-wide memory store memory://NAME.");
  m.def("forget_named_memory_store", &zarrpp::MemoryStore::forget_named, "name"_a,
        "Drops the memory store memory://NAME; whether there was one.");
}

}  // namespace zarrpp_python
