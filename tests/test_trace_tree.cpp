#include <algorithm>
#include <catch2/catch.hpp>
#include <failslow/trace/idle.hpp>
#include <failslow/trace/simhash.hpp>
#include <failslow/trace/step_breakdown.hpp>
#include <failslow/trace/tree.hpp>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace failslow;

namespace {

event make(std::int64_t s, std::int64_t e, name_id name = 0, event_kind k = event_kind::cpu_op) {
  event x;
  x.start_ns = s;
  x.end_ns = e;
  x.name = name;
  x.kind = k;
  return x;
}

std::vector<std::uint32_t> all(const std::vector<event>& ev) {
  std::vector<std::uint32_t> idx(ev.size());
  std::iota(idx.begin(), idx.end(), 0u);
  return idx;
}

// A random properly nested forest: returns events and the true parent (event index) of each.
void random_forest(std::mt19937_64& rng, std::vector<event>& ev, std::vector<std::int64_t>& parent, int n) {
  std::function<void(std::int64_t, std::int64_t, std::int64_t, int)> grow = [&](std::int64_t lo, std::int64_t hi,
                                                                                std::int64_t par, int depth) {
    std::int64_t t = lo;
    while (t < hi && static_cast<int>(ev.size()) < n) {
      const std::int64_t gap = static_cast<std::int64_t>(rng() % 3);
      const std::int64_t len =
          1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::max<std::int64_t>(1, (hi - lo) / 2)));
      if (t + gap + len > hi) break;
      const std::int64_t s = t + gap, e = s + len;
      const auto me = static_cast<std::int64_t>(ev.size());
      ev.push_back(make(s, e, static_cast<name_id>(rng() % 7)));
      parent.push_back(par);
      if (depth < 12 && len > 4) grow(s + 1, e - 1, me, depth + 1);
      t = e;
    }
  };
  std::int64_t t = 0;
  while (static_cast<int>(ev.size()) < n) {
    grow(t, t + 1000000, -1, 0);
    t += 1000001;
  }
}

}  // namespace

TEST_CASE("trees of random nested events recover the true parents, whatever the input order") {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<event> ev;
    std::vector<std::int64_t> parent;
    const int n = 100 * static_cast<int>(seed * seed);
    random_forest(rng, ev, parent, n);
    auto idx = all(ev);
    std::shuffle(idx.begin(), idx.end(), rng);
    const auto t = trace::build_tree(ev, idx);
    INFO("seed " << seed);
    REQUIRE(t.size() == ev.size());
    CHECK_FALSE(t.stats().input_sorted);
    CHECK(t.stats().partial_overlaps == 0);
    std::size_t roots = 0;
    std::int64_t total_inclusive = 0, total_self = 0;
    for (std::uint32_t i = 0; i < t.size(); ++i) {
      const auto& nd = t[i];
      const std::int64_t want = parent[nd.event];
      if (nd.parent < 0) {
        ++roots;
        CHECK(want == -1);
        total_inclusive += nd.inclusive_ns();
      } else {
        CHECK(t[static_cast<std::uint32_t>(nd.parent)].event == static_cast<std::uint32_t>(want));
        CHECK(nd.depth == t[static_cast<std::uint32_t>(nd.parent)].depth + 1);
      }
      total_self += nd.self_ns();
      CHECK(nd.self_ns() >= 0);
      // preorder: the subtree is the contiguous range, and its children tile it
      std::uint32_t covered = 1;
      for (const auto c : t.children(i)) covered += t[c].subtree_size;
      CHECK(covered == nd.subtree_size);
      CHECK(t.children(i).size() == nd.child_count);
    }
    CHECK(roots == t.roots().size());
    CHECK(total_self == total_inclusive);  // self times partition the roots' time
    // Sorted input takes the O(n) path and gives the same tree.
    std::vector<std::uint32_t> sorted;
    for (const auto& nd : t.nodes()) sorted.push_back(nd.event);
    const auto t2 = trace::build_tree(ev, sorted);
    CHECK(t2.stats().input_sorted);
    for (std::uint32_t i = 0; i < t.size(); ++i) CHECK(t2[i].parent == t[i].parent);
  }
}

TEST_CASE(
    "tree policy: partial overlaps clipped, zero-length leaves, identical intervals nest, touching are siblings") {
  std::vector<event> ev = {
      make(0, 100),    // 0: root
      make(10, 150),   // 1: starts inside 0, ends after it: partial overlap, clipped to 100
      make(20, 30),    // 2: child of 1
      make(100, 120),  // 3: starts when 0 ends: a root (half-open intervals), sibling of 0
      make(110, 110),  // 4: zero length inside 3
      make(200, 250),  // 5
      make(200, 250),  // 6: identical to 5: its child
      make(250, 250),  // 7: zero length at 5's end: a root
  };
  const auto t = trace::build_tree(ev, all(ev));
  const auto& s = t.stats();
  CHECK(s.partial_overlaps == 1);
  CHECK(s.clipped_ns == 50);
  CHECK(s.zero_length == 2);
  CHECK(s.identical == 1);
  auto node_of = [&](std::uint32_t e) {
    for (std::uint32_t i = 0; i < t.size(); ++i)
      if (t[i].event == e) return i;
    return std::uint32_t{999};
  };
  auto parent_event = [&](std::uint32_t e) {
    const auto p = t[node_of(e)].parent;
    return p < 0 ? -1 : static_cast<int>(t[static_cast<std::uint32_t>(p)].event);
  };
  CHECK(parent_event(0) == -1);
  CHECK(parent_event(1) == 0);
  CHECK(t[node_of(1)].end_ns == 100);
  CHECK(parent_event(2) == 1);
  CHECK(parent_event(3) == -1);
  CHECK(parent_event(4) == 3);
  CHECK(parent_event(6) == 5);
  CHECK(parent_event(7) == -1);
  CHECK(t[node_of(0)].self_ns() == 10);  // 100 - clipped child 90
  CHECK(t[node_of(1)].self_ns() == 80);  // 90 - 10
  CHECK(t[node_of(0)].subtree_size == 3);
  CHECK(t.roots().size() == 4);
  CHECK(t.height() == 3);
  CHECK_THROWS_AS(trace::build_tree(ev, {0, 42}), invalid_argument);
}

TEST_CASE("build_trees splits host threads and GPU streams") {
  io::trace_data d;
  auto add = [&](std::int64_t s, std::int64_t e, event_kind k, std::int16_t dev, std::uint32_t stream) {
    event x = make(s, e, 0, k);
    x.device = dev;
    x.stream = stream;
    d.events.push_back(x);
  };
  add(0, 100, event_kind::cpu_op, -1, 11);
  add(10, 20, event_kind::runtime, -1, 11);
  add(0, 100, event_kind::cpu_op, -1, 12);
  add(30, 40, event_kind::kernel, 0, 7);
  add(35, 45, event_kind::kernel, 0, 7);  // overlaps on the stream: a partial overlap there
  add(30, 40, event_kind::collective, 0, 9);
  const auto trees = trace::build_trees(d);
  REQUIRE(trees.size() == 4);
  CHECK_FALSE(trees[0].device_side);
  CHECK(trees[0].stream == 11);
  CHECK(trees[0].tree.size() == 2);
  CHECK(trees[2].device_side);
  CHECK(trees[2].stream == 7);
  CHECK(trees[2].tree.stats().partial_overlaps == 1);
}

TEST_CASE("SimHash: identical trees match, an extra subtree is found and lowers the similarity") {
  name_table names;
  const name_id step = names.intern("ProfilerStep#7"), fwd = names.intern("forward"), mm = names.intern("aten::mm"),
                launch = names.intern("cudaLaunchKernel"), jit = names.intern("torch._dynamo.compile"),
                bwd = names.intern("backward");
  auto worker = [&](bool with_jit, int layers) {
    std::vector<event> ev;
    ev.push_back(make(0, 1000000, step));
    ev.push_back(make(10, 400000, fwd));
    std::int64_t t = 20;
    for (int l = 0; l < layers; ++l) {
      ev.push_back(make(t, t + 1000, mm));
      ev.push_back(make(t + 100, t + 200, launch, event_kind::runtime));
      t += 2000;
    }
    if (with_jit) {
      ev.push_back(make(t, t + 300000, jit));
      for (int k = 0; k < 4; ++k)
        ev.push_back(make(t + 10 + k * 1000, t + 500 + k * 1000, launch, event_kind::runtime));
    }
    ev.push_back(make(500000, 900000, bwd));
    for (int l = 0; l < layers; ++l) ev.push_back(make(500010 + l * 2000, 501000 + l * 2000, mm));
    return ev;
  };
  for (int layers : {3, 10, 40}) {
    const auto a_ev = worker(false, layers), b_ev = worker(false, layers), c_ev = worker(true, layers);
    const auto a = trace::build_tree(a_ev, all(a_ev)), b = trace::build_tree(b_ev, all(b_ev)),
               c = trace::build_tree(c_ev, all(c_ev));
    CHECK(trace::tree_simhash(a, a_ev, names) == trace::tree_simhash(b, b_ev, names));
    const trace::tree_ref ra{a, a_ev, names}, rb{b, b_ev, names}, rc{c, c_ev, names};
    const auto same = trace::compare_subtrees(ra, 0, rb, 0);
    CHECK(same.similarity == 1.0);
    CHECK(same.differences.empty());
    const auto diff = trace::compare_subtrees(ra, 0, rc, 0);
    INFO("layers " << layers);
    REQUIRE(diff.differences.size() == 1);
    CHECK(diff.differences[0].what == trace::tree_difference::kind::only_in_b);
    CHECK(c_ev[c[diff.differences[0].node].event].name == jit);
    // SimHash is a majority vote per bit: a few extra nodes flip bits of a small tree, not
    // necessarily of a large one; the structural comparison finds them either way.
    if (layers == 3) CHECK(diff.similarity < 1.0);
    CHECK(diff.similarity >= 0.75);
    CHECK(trace::find_named(c, c_ev, names, "torch._dynamo.compile").size() == 1);
    CHECK(trace::find_named(c, c_ev, names, "absent").empty());
  }
  // Unrelated trees are far apart.
  {
    std::vector<event> x, y;
    for (int i = 0; i < 50; ++i) x.push_back(make(i * 10, i * 10 + 5, fwd));
    for (int i = 0; i < 50; ++i) y.push_back(make(i * 10, i * 10 + 5, names.intern("other_" + std::to_string(i))));
    const auto tx = trace::build_tree(x, all(x)), ty = trace::build_tree(y, all(y));
    CHECK(trace::simhash_similarity(trace::tree_simhash(tx, x, names), trace::tree_simhash(ty, y, names)) < 0.8);
  }
  CHECK(trace::simhash_similarity(0, ~std::uint64_t{0}) == 0.0);
  CHECK(trace::simhash_similarity(5, 4) == 1.0 - 1.0 / 64);
  CHECK(trace::child_bucket(0) == 0);
  CHECK(trace::child_bucket(1) == 1);
  CHECK(trace::child_bucket(3) == 2);
  CHECK(trace::child_bucket(4) == 3);
}

TEST_CASE("idle-time breakdown, launch delays and launch stalls") {
  io::trace_data d;
  name_table names;
  const name_id k = names.intern("k"), op = names.intern("aten::op"), gc = names.intern("gc.collect"),
                launch = names.intern("cudaLaunchKernel");
  std::uint32_t corr = 1;
  auto kernel = [&](std::int64_t launch_at, std::int64_t start, std::int64_t dur) {
    event l = make(launch_at, launch_at + 5000, launch, event_kind::runtime);
    l.correlation = corr;
    l.stream = 1;
    event g = make(start, start + dur, k, event_kind::kernel);
    g.correlation = corr++;
    g.device = 0;
    g.stream = 7;
    d.events.push_back(l);
    d.events.push_back(g);
  };
  kernel(0, 10000, 100000);         // busy 10k..110k
  kernel(20000, 120000, 50000);     // gap 10k, launched early -> kernel wait
  kernel(30000, 270000, 10000);     // gap 100k, launched early -> other
  kernel(300000, 310000, 10000);    // launched after 280k: host wait 30k
  kernel(8300000, 8310000, 10000);  // 8 ms with no launch: a stall if the CPU is busy
  // CPU busy between the two last launches (6 ms of 8 ms), mostly in gc.collect
  d.events.push_back(make(305000, 600000, op));
  d.events.push_back(make(1000000, 6000000, gc));
  d.events.push_back(make(6000000, 6800000, op));
  event orphan = make(9000000, 9001000, k, event_kind::kernel);  // no launch known
  orphan.device = 0;
  orphan.stream = 7;
  d.events.push_back(orphan);
  const auto r = trace::analyze_idle(d);
  REQUIRE(r.streams.size() == 1);
  const auto& s = r.streams[0];
  CHECK(s.activities == 6);
  CHECK(s.kernel_wait_ns == 10000);
  CHECK(s.other_ns == 100000 + (9000000 - 8320000));
  CHECK(s.host_wait_ns == 30000 + (8310000 - 320000));
  CHECK(s.busy_ns == 100000 + 50000 + 10000 + 10000 + 10000 + 1000);
  CHECK(s.idle_ns == s.host_wait_ns + s.kernel_wait_ns + s.other_ns);
  CHECK(r.unknown_launch == 1);
  REQUIRE(r.launch_delays.size() == 5);
  CHECK(r.launch_delays[0].second == 10000 - 5000);
  REQUIRE(r.stalls.size() == 1);
  CHECK(r.stalls[0].start_ns == 300000);
  CHECK(r.stalls[0].end_ns == 8300000);
  CHECK(r.stalls[0].cpu_busy_ns == 295000 + 5000000 + 800000);
  CHECK(r.stalls[0].top_ops.front().first == gc);
  CHECK(r.stalls[0].gpu_idle_ns == 8000000 - 10000);
  trace::idle_options strict;
  strict.stall_busy_fraction = 0.9;
  CHECK(trace::analyze_idle(d, strict).stalls.empty());
  strict.stall_busy_fraction = 1.5;
  CHECK_THROWS_AS(trace::analyze_idle(d, strict), invalid_argument);
}

TEST_CASE("GPU idle per device is the time no stream is busy, not the sum over streams") {
  io::trace_data d;
  name_table names;
  const name_id k = names.intern("k");
  auto kernel = [&](std::int16_t device, std::uint32_t stream, std::int64_t start, std::int64_t end) {
    event e = make(start, end, k, event_kind::kernel);
    e.device = device;
    e.stream = stream;
    d.events.push_back(e);
  };
  // Device 0: stream 7 busy [0, 100) and [300, 400); stream 9 busy [50, 200) and [350, 500).
  // Union: [0, 200) and [300, 500): busy 400 of span 500, idle 100 (the gap [200, 300)).
  // Per stream: idle 200 on stream 7 ([100, 300)), 150 on stream 9 ([200, 350)): 350 summed.
  kernel(0, 7, 0, 100);
  kernel(0, 7, 300, 400);
  kernel(0, 9, 50, 200);
  kernel(0, 9, 350, 500);
  kernel(1, 7, 1000, 1100);  // device 1: one kernel, no idle
  const auto r = trace::analyze_idle(d);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].device == 0);
  CHECK(r.devices[0].streams == 2);
  CHECK(r.devices[0].busy_ns == 400);
  CHECK(r.devices[0].span_ns == 500);
  CHECK(r.devices[0].idle_ns == 100);
  CHECK(r.devices[1].busy_ns == 100);
  CHECK(r.devices[1].idle_ns == 0);
  CHECK(r.busy_ns == 500);
  CHECK(r.idle_ns == 100);
  CHECK(r.stream_idle_ns == 350);
  CHECK(r.stream_idle_ns == r.host_wait_ns + r.kernel_wait_ns + r.other_ns);
}

TEST_CASE("GPU time by class and by name") {
  io::trace_data d;
  name_table names;
  const name_id gemm = names.intern("volta_sgemm_128x64_nn"), nccl = names.intern("ncclDevKernel_AllReduce_Sum_bf16"),
                copy = names.intern("Memcpy HtoD (Pageable -> Device)"), op = names.intern("aten::mm"),
                coll = names.intern("my_allreduce");
  auto gpu = [&](name_id n, event_kind kind, std::int64_t start, std::int64_t dur) {
    event e = make(start, start + dur, n, kind);
    e.device = 0;
    d.events.push_back(e);
  };
  gpu(gemm, event_kind::kernel, 0, 100);
  gpu(gemm, event_kind::kernel, 200, 50);
  gpu(nccl, event_kind::kernel, 300, 70);  // a kernel whose name says communication
  gpu(copy, event_kind::memcpy, 400, 30);
  gpu(coll, event_kind::collective, 500, 20);  // a collective whatever its name
  d.events.push_back(make(0, 1000, op));       // host: not GPU time
  const auto t = trace::device_time_by_class(d, names);
  CHECK(t.by_class.compute_ns == 150);
  CHECK(t.by_class.communication_ns == 90);
  CHECK(t.by_class.memory_ns == 30);
  CHECK(t.by_class.total() == 270);
  REQUIRE(t.by_name.size() == 4);
  CHECK(t.by_name[0].name == gemm);
  CHECK(t.by_name[0].count == 2);
  CHECK(t.by_name[0].total_ns == 150);
  CHECK(t.by_name[0].cls == kernel_class::compute);
  CHECK(t.by_name[1].cls == kernel_class::communication);
  CHECK(t.by_name[2].cls == kernel_class::memory);
  CHECK(t.by_name[3].cls == kernel_class::communication);
}
