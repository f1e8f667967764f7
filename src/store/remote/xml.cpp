#include "xml.hpp"

#include <expat.h>

#include <climits>
#include <memory>

#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

namespace {

// Expat with namespace processing: names arrive as "URI\x1flocal" (or "local" without a namespace).
constexpr char kNsSeparator = '\x1f';

struct State {
  XML_Parser parser;
  const std::function<void(const std::vector<std::string>&, std::string&)>* on_element;
  std::vector<std::string> path;
  std::vector<std::string> texts;
  std::string error;  // set when a handler stopped the parser
};

std::string local_name(const XML_Char* name) {
  const std::string_view n(name);
  const std::size_t sep = n.rfind(kNsSeparator);
  return std::string(sep == std::string_view::npos ? n : n.substr(sep + 1));
}

void stop(State& st, std::string why) {
  if (st.error.empty()) st.error = std::move(why);
  XML_StopParser(st.parser, XML_FALSE);
}

void XMLCALL on_start(void* user, const XML_Char* name, const XML_Char**) {
  auto& st = *static_cast<State*>(user);
  st.path.push_back(local_name(name));
  st.texts.emplace_back();
}

void XMLCALL on_end(void* user, const XML_Char*) {
  auto& st = *static_cast<State*>(user);
  try {
    (*st.on_element)(st.path, st.texts.back());
  } catch (const std::exception& e) {
    stop(st, e.what());
    return;
  }
  st.path.pop_back();
  st.texts.pop_back();
}

void XMLCALL on_text(void* user, const XML_Char* s, int len) {
  auto& st = *static_cast<State*>(user);
  if (!st.texts.empty()) st.texts.back().append(s, static_cast<std::size_t>(len));
}

void XMLCALL on_doctype(void* user, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  stop(*static_cast<State*>(user), "document type declarations are not supported");
}

struct ParserFree {
  void operator()(XML_Parser p) const { XML_ParserFree(p); }
};

}  // namespace

void parse_xml(std::string_view xml,
               const std::function<void(const std::vector<std::string>& path, std::string& text)>& on_element) {
  if (xml.size() > static_cast<std::size_t>(INT_MAX)) throw ArgumentError("XML document too large");
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, ParserFree> p(XML_ParserCreateNS("UTF-8", kNsSeparator));
  if (!p) throw ArgumentError("cannot create an XML parser");
  State st{p.get(), &on_element, {}, {}, {}};
  XML_SetUserData(p.get(), &st);
  XML_SetElementHandler(p.get(), on_start, on_end);
  XML_SetCharacterDataHandler(p.get(), on_text);
  XML_SetStartDoctypeDeclHandler(p.get(), on_doctype);
  const auto rc = XML_Parse(p.get(), xml.data(), static_cast<int>(xml.size()), XML_TRUE);
  if (!st.error.empty()) throw ArgumentError(st.error);
  if (rc != XML_STATUS_OK)
    throw ArgumentError(std::string(XML_ErrorString(XML_GetErrorCode(p.get()))) + " at line " +
                        std::to_string(XML_GetCurrentLineNumber(p.get())) + ", column " +
                        std::to_string(XML_GetCurrentColumnNumber(p.get())));
}

}  // namespace zarrpp::detail
