// zarrpp tree: the hierarchy under a group (or one array), with each array's shape, dtype and codecs.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"

namespace zarrpp::cli {

namespace {

void print_tree(const StorePtr& store, const std::string& path, const std::string& name, const std::string& indent,
                bool last, bool root) {
  const auto t = node_type(store, path);
  const std::string branch = root ? "" : indent + (last ? "└── " : "├── ");
  // The root is named as the user typed it.
  if (!t) throw NotFoundError("no Zarr node at '" + (root ? name : path) + "' (no zarr.json, .zarray or .zgroup)");
  if (*t == NodeType::Array) {
    auto z = Array::open(store, path);
    std::cout << branch << name << " " << shape_str(z.shape()) << " " << z.dtype().name() << " "
              << codecs_summary(z.metadata()) << "\n";
    return;
  }
  std::cout << branch << name << "\n";
  const auto g = Group::open(store, path);
  const auto kids = g.children();
  const std::string next = root ? "" : indent + (last ? "    " : "│   ");
  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (!kids[i].error.empty()) {
      std::cout << next << (i + 1 == kids.size() ? "└── " : "├── ") << kids[i].name << " (unreadable: " << kids[i].error
                << ")\n";
      continue;
    }
    try {
      print_tree(store, path.empty() ? kids[i].name : path + "/" + kids[i].name, kids[i].name, next,
                 i + 1 == kids.size(), false);
    } catch (const Error& e) {
      // One member zarrpp cannot open is shown as such; the rest of the tree still prints.
      std::cout << next << (i + 1 == kids.size() ? "└── " : "├── ") << kids[i].name << " (unreadable: " << e.what()
                << ")\n";
    }
  }
}

class TreeCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("tree", "Show the hierarchy with each array's shape, dtype and codecs");
    sub_->add_option("STORE", store_, "A group or array: its directory or URL")->required();
  }

  void run() override { print_tree(open_dir(store_, Use::read), "", store_, "", true, true); }

 private:
  std::string store_;
};

}  // namespace

std::unique_ptr<Command> make_tree() { return std::make_unique<TreeCommand>(); }

}  // namespace zarrpp::cli
