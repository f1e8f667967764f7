#pragma once
// A Python mapping as a zarrpp store (zarr-python's `store={}`): keys are the store's keys, values
// the stored bytes, as zarr-python 2 keeps them in a dict (values read through the buffer protocol
// or a `to_bytes()` method, as zarr-python 3's Buffer; written as `bytes`). Every operation takes
// the GIL. A plain dict also gets versions (a hash of the value), compare-and-swap (the read, the
// comparison and the write under one hold of the GIL, which a dict never releases) and locks
// within this process (no other process can reach the dict): growth and concurrent attribute
// updates are safe on it. Any other mapping has none, so growth on it is refused by the array
// layer, naming the store.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "zarrpp/store/store.hpp"

namespace zarrpp_python {

namespace py = pybind11;

class MappingStore final : public zarrpp::Store {
 public:
  MappingStore(py::object mapping, bool read_only)
      : mapping_(std::move(mapping)),
        id_(reinterpret_cast<std::uintptr_t>(mapping_.ptr())),
        plain_dict_(PyDict_CheckExact(mapping_.ptr()) != 0),
        read_only_(read_only) {}
  ~MappingStore() override {
    if (!Py_IsInitialized()) {  // the interpreter is gone: nothing to release
      mapping_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    mapping_ = py::object();
  }

  const py::object& mapping() const { return mapping_; }

  zarrpp::StoreCapabilities capabilities() const override {
    return {.writable = !read_only_,
            .listing = true,
            .conditional_writes = plain_dict_,
            .conditional_erase = plain_dict_,
            .locking = plain_dict_,
            .native_streaming = false};
  }
  std::string describe() const override {
    py::gil_scoped_acquire gil;
    return "mapping (" + std::string(py::str(py::type::of(mapping_).attr("__name__"))) + ")";
  }
  std::string location() const override { return "mapping:" + std::to_string(id_); }

 protected:
  std::optional<zarrpp::VersionedBytes> do_get(const std::string& key, const zarrpp::ByteRange& range,
                                               std::uint64_t max_bytes) override {
    py::gil_scoped_acquire gil;
    auto value = lookup(key);
    if (!value) return std::nullopt;
    return read_value(key, *value, range, max_bytes);
  }
  void do_set(const std::string& key, const zarrpp::Bytes& value) override {
    py::gil_scoped_acquire gil;
    store_value(key, value);
  }
  bool do_set_if(const std::string& key, const zarrpp::Bytes& value,
                 const std::optional<zarrpp::Version>& expected) override {
    py::gil_scoped_acquire gil;  // held from the comparison to the write: nothing runs between
    if (!matches(key, expected)) return false;
    store_value(key, value);
    return true;
  }
  bool do_erase_if(const std::string& key, const std::optional<zarrpp::Version>& expected) override {
    py::gil_scoped_acquire gil;
    if (!matches(key, expected)) return false;
    if (expected) erase_value(key);
    return true;
  }
  void do_erase(const std::string& key) override {
    py::gil_scoped_acquire gil;
    erase_value(key);
  }
  std::vector<std::string> do_list_prefix(const std::string& prefix) override {
    py::gil_scoped_acquire gil;
    std::vector<std::string> out;
    for (const auto& k : py::iter(mapping_)) {
      if (!py::isinstance<py::str>(k)) continue;  // not a store key
      auto s = key_text(k);
      if (s.compare(0, prefix.size(), prefix) == 0) out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::unique_ptr<zarrpp::StoreLock> do_lock(const std::string& key) override {
    if (!plain_dict_) return Store::do_lock(key);
    return std::make_unique<Held>(mutex_for(key));
  }

 private:
  struct Held final : zarrpp::StoreLock {
    explicit Held(std::shared_ptr<std::mutex> m) : mutex(std::move(m)), lock(*mutex) {}
    std::shared_ptr<std::mutex> mutex;
    std::unique_lock<std::mutex> lock;
  };

  // One mutex per key of each dict, shared by every store over it in this process.
  std::shared_ptr<std::mutex> mutex_for(const std::string& key) const {
    static std::mutex registry_mu;
    static std::map<std::pair<std::uintptr_t, std::string>, std::weak_ptr<std::mutex>> registry;
    std::lock_guard lk(registry_mu);
    auto& slot = registry[{id_, key}];
    auto m = slot.lock();
    if (!m) slot = m = std::make_shared<std::mutex>();
    return m;
  }

  // Keys as zarrpp holds them: UTF-8, a lone surrogate (Python's name for an undecodable file
  // name byte) in its three-byte form, both ways.
  static std::string key_text(const py::handle& k) {
    const auto b = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(k.ptr(), "utf-8", "surrogatepass"));
    if (!b) throw py::error_already_set();
    return {PyBytes_AS_STRING(b.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(b.ptr()))};
  }
  static py::object py_key(const std::string& key) {
    auto k = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(key.data(), static_cast<py::ssize_t>(key.size()), "surrogatepass"));
    if (!k) throw py::error_already_set();
    return k;
  }

  // A failure of the mapping's own code: an Exception becomes a StoreError naming the key and
  // what was done; anything else (KeyboardInterrupt, SystemExit) goes on as it is.
  [[noreturn]] void failed(py::error_already_set& e, const std::string& doing) const {
    if (!e.matches(PyExc_Exception)) throw;
    throw zarrpp::StoreError(doing + " " + describe() + ": " + std::string(py::str(e.type().attr("__name__"))) + ": " +
                             std::string(py::str(e.value())));
  }

  std::optional<py::object> lookup(const std::string& key) const {
    try {
      return py::object(mapping_[py_key(key)]);
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyError)) return std::nullopt;
      failed(e, "reading '" + key + "' from");
    }
  }

  // The bytes a stored value holds: `bytes` as they are; another bytes-like object, or one with
  // to_bytes() (zarr-python 3's Buffer), as bytes.
  static py::bytes bytes_of(const std::string& key, py::object value) {
    if (!PyBytes_Check(value.ptr()) && !PyObject_CheckBuffer(value.ptr()) && !PyLong_Check(value.ptr()) &&
        py::hasattr(value, "to_bytes"))  // (an int has to_bytes too, but is no stored value)
      value = value.attr("to_bytes")();
    if (PyBytes_Check(value.ptr())) return py::reinterpret_borrow<py::bytes>(value);
    if (!PyObject_CheckBuffer(value.ptr()))
      throw zarrpp::StoreError("the mapping's value for '" + key + "' is not bytes (a " +
                               std::string(py::str(py::type::of(value).attr("__name__"))) + ")");
    PyObject* b = PyBytes_FromObject(value.ptr());
    if (!b) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(b);
  }

  zarrpp::VersionedBytes read_value(const std::string& key, const py::object& value, const zarrpp::ByteRange& range,
                                    std::uint64_t max_bytes) const {
    const py::bytes held = bytes_of(key, value);
    const auto* p = reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(held.ptr()));
    const auto size = static_cast<std::uint64_t>(PyBytes_GET_SIZE(held.ptr()));
    const auto [b, e] = range.resolve(size);
    if (e - b > max_bytes)
      throw zarrpp::StoreError(zarrpp::ErrorCode::limit_exceeded, "'" + key + "' in " + describe() + " holds " +
                                                                      std::to_string(e - b) + " bytes, more than the " +
                                                                      std::to_string(max_bytes) + " expected");
    // A ranged read (part of a shard) has no use for the version: the value is not hashed then.
    const bool whole = range.kind == zarrpp::ByteRange::Kind::All;
    return zarrpp::VersionedBytes{zarrpp::Bytes(p + b, p + e), whole ? version_of(p, size) : zarrpp::Version()};
  }

  static zarrpp::Version version_of(const std::uint8_t* p, std::uint64_t size) {
    const auto h = std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(p), size));
    return std::to_string(size) + ":" + std::to_string(h);
  }

  // Whether the key's current value is the version expected (nullopt: absent). GIL held.
  bool matches(const std::string& key, const std::optional<zarrpp::Version>& expected) const {
    auto value = lookup(key);
    if (!value || !expected) return !value && !expected;
    return read_value(key, *value, zarrpp::ByteRange::all(), zarrpp::kNoLimit).version == *expected;
  }

  void store_value(const std::string& key, const zarrpp::Bytes& value) {
    try {
      mapping_[py_key(key)] =
          py::bytes(reinterpret_cast<const char*>(value.data()), static_cast<py::ssize_t>(value.size()));
    } catch (py::error_already_set& e) {
      failed(e, "writing '" + key + "' into");
    }
  }

  void erase_value(const std::string& key) {
    try {
      mapping_.attr("__delitem__")(py_key(key));
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyError)) return;
      failed(e, "removing '" + key + "' from");
    }
  }

  py::object mapping_;
  std::uintptr_t id_;
  bool plain_dict_;
  bool read_only_;
};

}  // namespace zarrpp_python
