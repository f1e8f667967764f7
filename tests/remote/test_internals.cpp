// Internals of the remote stores: digests and encodings (libcrypto, libcurl), XML through
// libexpat, S3 response parsing, byte ranges.
#include "harness.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(RemoteInternals, HashesMatchKnownVectorsAndPython) {
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Content-MD5 is base64 of the digest.
  EXPECT_EQ(detail::md5_base64(detail::as_bytes("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(detail::md5_base64(detail::as_bytes("The quick brown fox jumps over the lazy dog")),
            "nhB9nTcrtoJr2B01QqQZ1g==");
  // Every padding case (lengths 0..200) against Python's hashlib.
  const auto r = run({"python3", "-c",
                      "import base64, hashlib\n"
                      "for n in range(201):\n"
                      "  d = bytes((i * 7 + 3) % 256 for i in range(n))\n"
                      "  print(hashlib.sha256(d).hexdigest(), base64.b64encode(hashlib.md5(d).digest()).decode())\n"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(r.out);
  for (int n = 0; n <= 200; ++n) {
    std::string sha, md;
    in >> sha >> md;
    Bytes d(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 7 + 3) % 256);
    EXPECT_EQ(detail::sha256_hex(d), sha) << n;
    EXPECT_EQ(detail::md5_base64(d), md) << n;
  }
  EXPECT_EQ(detail::base64(detail::as_bytes("")), "");
  EXPECT_EQ(detail::base64(detail::as_bytes("f")), "Zg==");
  EXPECT_EQ(detail::base64(detail::as_bytes("fo")), "Zm8=");
  EXPECT_EQ(detail::base64(detail::as_bytes("foo")), "Zm9v");
  EXPECT_EQ(detail::base64(detail::as_bytes("foobar")), "Zm9vYmFy");
}

TEST(RemoteInternals, UrlEncoding) {
  EXPECT_EQ(detail::percent_encode("a/b c+d%e~f.g-h_i", true), "a/b%20c%2Bd%25e~f.g-h_i");
  EXPECT_EQ(detail::percent_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(detail::percent_encode("\xc3\xa9&=?#", true), "%C3%A9%26%3D%3F%23");
  EXPECT_EQ(detail::percent_decode("a%20b%2fc", "x"), "a b/c");
  expect_throw_with<StoreError>([] { detail::percent_decode("a%2", "the URL 'u'"); },
                                {"the URL 'u'", "malformed percent-escape"});
  expect_throw_with<StoreError>([] { detail::percent_decode("a%zz", "u"); }, {"'%zz'"});
  EXPECT_EQ(detail::canonical_query({{"prefix", "a b/"}, {"list-type", "2"}, {"continuation-token", "x+y=="}}),
            "continuation-token=x%2By%3D%3D&list-type=2&prefix=a%20b%2F");
}

TEST(RemoteInternals, XmlReaderDecodesAndRejects) {
  std::vector<std::pair<std::string, std::string>> seen;
  detail::parse_xml(
      "<?xml version=\"1.0\"?>\n<!-- c --><s3:R xmlns:s3=\"u\" a='>/'><K>a&amp;b&lt;c&gt;&quot;&apos;&#65;&#x263A;</K>"
      "<E/><C><![CDATA[<raw&>]]></C><N><K>in</K></N></s3:R>",
      [&](const std::vector<std::string>& path, std::string& text) {
        std::string p;
        for (const auto& s : path) p += "/" + s;
        seen.emplace_back(p, text);
      });
  const std::vector<std::pair<std::string, std::string>> want = {
      {"/R/K", "a&b<c>\"'A\xe2\x98\xba"}, {"/R/E", ""}, {"/R/C", "<raw&>"}, {"/R/N/K", "in"}, {"/R/N", ""}, {"/R", ""}};
  EXPECT_EQ(seen, want);
  auto bad = [](const std::string& x, const std::string& why) {
    try {
      detail::parse_xml(x, [](const std::vector<std::string>&, std::string&) {});
      ADD_FAILURE() << x;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  bad("<a><b></a>", "mismatched tag");
  bad("<a>", "no element found");
  bad("<a>&bogus;</a>", "undefined entity");
  bad("<a>&#xD800;</a>", "invalid character number");
  bad("<!DOCTYPE a [<!ENTITY x 'y'>]><a>&x;</a>", "document type");
  bad("", "no element found");
  bad("<a/><b/>", "junk after document element");
  // A handler's failure stops the parse and is reported.
  expect_throw_with<ArgumentError>(
      [] {
        detail::parse_xml("<a><b/></a>",
                          [](const std::vector<std::string>&, std::string&) { throw ArgumentError("stop here"); });
      },
      {"stop here"});
  EXPECT_EQ(detail::xml_escape("a&<>\"'\r"), "a&amp;&lt;&gt;&quot;&apos;&#13;");
}

TEST(RemoteInternals, S3ResponsesParseIntoStructs) {
  const auto err = detail::parse_s3_error("<Error><Code>NoSuchKey</Code><Message>gone &amp; lost</Message></Error>");
  EXPECT_EQ(err.code, "NoSuchKey");
  EXPECT_EQ(err.message, "gone & lost");
  EXPECT_EQ(detail::parse_s3_error("<html>proxy error</htm>").code, "");  // not XML: no code
  const auto page = detail::parse_s3_list_page(
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a/zarr.json</Key></Contents><Contents><Key>a/c/0</Key></Contents>"
      "<CommonPrefixes><Prefix>b/</Prefix></CommonPrefixes><NextContinuationToken>t1</NextContinuationToken>"
      "</ListBucketResult>");
  EXPECT_EQ(page.keys, (std::vector<std::string>{"a/zarr.json", "a/c/0"}));
  EXPECT_EQ(page.prefixes, (std::vector<std::string>{"b/"}));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next, std::optional<std::string>("t1"));
  expect_throw_with<ArgumentError>([] { detail::parse_s3_list_page("<Other/>"); }, {"not a ListBucketResult"});
  expect_throw_with<ArgumentError>([] { detail::parse_s3_list_page("<ListBucketResult>"); }, {"no element found"});
  const auto failed = detail::parse_s3_delete_result(
      "<DeleteResult><Deleted><Key>x</Key></Deleted><Error><Key>y</Key><Code>AccessDenied</Code>"
      "<Message>no</Message></Error></DeleteResult>");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].key, "y");
  EXPECT_EQ(failed[0].code, "AccessDenied");
  EXPECT_EQ(failed[0].message, "no");
}

TEST(RemoteInternals, ContentLengthsAreParsedStrictly) {
  EXPECT_EQ(detail::parse_content_length("0"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(detail::parse_content_length("18446744073709551615"), std::optional<std::uint64_t>(~std::uint64_t{0}));
  for (const char* bad : {"", "-1", "1e3", " 5", "5 ", "18446744073709551616", "0x10", "12a"})
    EXPECT_FALSE(detail::parse_content_length(bad).has_value()) << bad;
}

TEST(RemoteInternals, RangesFromResponses) {
  auto resp = [](long status, const std::string& body, const std::string& content_range = "") {
    detail::HttpResponse r;
    r.status = status;
    r.body = B(body);
    if (!content_range.empty()) r.headers.emplace_back("content-range", content_range);
    return r;
  };
  EXPECT_EQ(detail::plan_range(ByteRange::all()).whole, true);
  EXPECT_EQ(detail::plan_range(ByteRange::from(0)).whole, true);
  EXPECT_EQ(detail::plan_range(ByteRange::range(2, 3)).header, "Range: bytes=2-4");
  EXPECT_EQ(detail::plan_range(ByteRange::from(7)).header, "Range: bytes=7-");
  EXPECT_EQ(detail::plan_range(ByteRange::last(4)).header, "Range: bytes=-4");
  EXPECT_TRUE(detail::plan_range(ByteRange::last(0)).empty);
  EXPECT_TRUE(detail::plan_range(ByteRange::range(5, 0)).empty);
  EXPECT_EQ(detail::plan_range(ByteRange::range(5, ~std::uint64_t{0})).header, "Range: bytes=5-");
  // 200 with the whole value: sliced.
  auto r = resp(200, "0123456789");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::range(2, 3), "")), "234");
  r = resp(200, "0123456789");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(3), "")), "789");
  // 206: checked against Content-Range.
  r = resp(206, "234", "bytes 2-4/10");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::range(2, 3), "")), "234");
  r = resp(206, "0123456789", "bytes 0-9/10");  // more than asked for
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(4), "")), "6789");
  r = resp(206, "789", "bytes 7-9/*");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(3), "")), "789");
  r = resp(416, "");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::from(20), "")), "");
  r = resp(206, "345", "bytes 3-5/10");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(2, 3), "GET x: "); },
                                {"GET x: ", "asked for bytes 2..5", "bytes 3-5/10"});
  r = resp(206, "34", "bytes 3-5/10");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(3, 3), ""); },
                                {"announces 3 bytes, got 2"});
  r = resp(206, "345");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(3, 3), ""); }, {"no Content-Range"});
}
