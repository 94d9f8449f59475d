// The bindings' boundary, natively: objects held by id (Handles) and the one error convention
// (error_message), which every embind entry point runs under.
#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/handles.hpp"

using namespace attnlab;

TEST(Handles, IdsAreUniqueAcrossTablesAndNeverReused) {
  Handles<int> a;
  Handles<std::string> b;
  const int x = a.add(std::make_unique<int>(4));
  const int y = b.add(std::make_unique<std::string>("four"));
  EXPECT_NE(x, y);
  EXPECT_EQ(a.at(x, "this int"), 4);
  EXPECT_EQ(b.at(y, "this string"), "four");
  a.dispose(x);
  a.dispose(x);  // twice, or an id of another table: nothing happens
  a.dispose(y);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_GT(a.add(std::make_unique<int>(5)), y);
}

TEST(Handles, ADisposedIdIsNamed) {
  Handles<int> t;
  const int id = t.add(std::make_unique<int>(1));
  t.dispose(id);
  try {
    t.at(id, "this translator");
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "this translator has been disposed");
  }
}

TEST(ErrorMessage, EmptyOnSuccessElseWordedForTheUser) {
  int ran = 0;
  EXPECT_EQ(error_message([&] { ++ran; }), "");
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(error_message([] { throw Error("q: expected [2, 3], got [3, 2]"); }), "q: expected [2, 3], got [3, 2]");
  EXPECT_EQ(error_message([] { throw std::bad_alloc(); }, "this checkpoint"),
            "out of memory: the WebAssembly heap could not grow enough for this checkpoint");
  EXPECT_EQ(error_message([] { throw std::bad_alloc(); }),
            "out of memory: the WebAssembly heap could not grow enough for this call");
  EXPECT_EQ(error_message([] { std::vector<float> v; v.reserve(v.max_size() + 1); }),
            "out of memory: this call's working memory exceeds the WebAssembly heap's 2 GiB limit");
  EXPECT_EQ(error_message([] { throw std::runtime_error("a broken invariant"); }), "internal error: a broken invariant");
}
