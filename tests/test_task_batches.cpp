// A plan's tasks in batches of whole stored objects (src/array/task_batches.hpp): every task of
// the selection once, each with the object that holds its unit, objects never split across
// batches and batches no bigger than asked; and reads and writes over more chunks than one batch
// holds, against a plain model.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>

#include "array/engine.hpp"
#include "select/task_batches.hpp"
#include "support.hpp"

using namespace zarrpp;

namespace {

// Every task of an orthogonal plan, as the product of its dimension maps (the plain model).
std::multiset<std::vector<std::int64_t>> all_tasks(const Plan& plan) {
  std::multiset<std::vector<std::int64_t>> out;
  std::vector<std::vector<std::int64_t>> partial{{}};
  for (const auto& maps : plan.dim_maps) {
    std::vector<std::vector<std::int64_t>> next;
    for (const auto& p : partial)
      for (const auto& m : maps) {
        auto q = p;
        q.push_back(m.chunk);
        next.push_back(std::move(q));
      }
    partial = std::move(next);
  }
  out.insert(partial.begin(), partial.end());
  return out;
}

}  // namespace

RC_GTEST_PROP(TaskBatches, EveryTaskOnceWithItsObjectAndObjectsWhole, ()) {
  const auto l = ref::gen_layout_any_grid();
  auto z = Array::create(MemoryStore::create(), ref::spec_of(l));
  const auto s = make_snapshot(z.metadata(), std::nullopt);
  const auto sel = ref::gen_selection(l.shape, true);
  const Plan plan = plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid);
  const std::size_t per_batch = *rc::gen::inRange<std::size_t>(1, 6);

  TaskBatches batches(plan, s->storage_indexer(), per_batch);
  TaskBatch b;
  std::multiset<std::vector<std::int64_t>> seen;
  std::set<std::vector<std::int64_t>> objects;
  while (batches.next(b)) {
    RC_ASSERT(!b.objects.empty());
    std::size_t before_last = 0;  // tasks of the batch before its last object
    for (const auto& o : b.objects) {
      RC_ASSERT(objects.insert(o.storage).second);  // each object in one batch, once
      RC_ASSERT(!o.tasks.empty());
      for (const auto i : o.tasks) {
        const ChunkTask& t = b.tasks[i];
        RC_ASSERT(s->storage_of(t.chunk) == o.storage);
        bool covers = true;
        for (std::size_t d = 0; d < t.dims.size(); ++d) {
          RC_ASSERT(t.dims[d]->chunk == t.chunk[d]);
          covers = covers && t.dims[d]->covers_domain;
        }
        RC_ASSERT(t.covers_domain == covers);
        seen.insert(t.chunk);
      }
      if (&o != &b.objects.back()) before_last += o.tasks.size();
    }
    RC_ASSERT(before_last < per_batch);  // a batch closes once it holds enough tasks
  }
  RC_ASSERT(seen == all_tasks(plan));
  RC_ASSERT(batches.objects() == objects.size());
}

// A selection over more one-element chunks than a batch holds (3 batches), read and written
// through the array, against the model.
TEST(TaskBatches, ReadsAndWritesAcrossBatchesMatchTheModel) {
  auto z = Array::create(MemoryStore::create(),
                         ArraySpec{.shape = {230, 230}, .chunks = {1, 1}, .dtype = DataType::int32, .fill_value = 7});
  NDArray values(DataType::int32, {115, 230});
  for (std::int64_t i = 0; i < values.size(); ++i) values.data<std::int32_t>()[i] = static_cast<std::int32_t>(i);
  z.write({Slice{0, 230, 2}, Slice{}}, values.view());                            // 26,450 chunks
  const NDArray back = z.read({Slice{228, std::nullopt, -2}, Slice{1, 230, 1}});  // 26,335 chunks
  ASSERT_EQ(back.shape(), (Shape{115, 229}));
  for (std::int64_t r = 0; r < 115; ++r)
    for (std::int64_t c = 0; c < 229; ++c)
      ASSERT_EQ(back.data<std::int32_t>()[r * 229 + c], values.data<std::int32_t>()[(114 - r) * 230 + c + 1])
          << r << "," << c;
  const NDArray odd = z.read({Slice{1, 230, 2}, 5});
  for (std::int64_t r = 0; r < odd.size(); ++r) ASSERT_EQ(odd.data<std::int32_t>()[r], 7);
}
