#pragma once
/// @file
/// Warnings: what did not fail an operation but must not go unnoticed (a copy of metadata that could
/// not be kept current, a check that could not be made). The library never prints or swallows them
/// itself: it hands each one to the process-wide handler. The default handler prints one line,
/// "zarrpp: warning: <message>", to stderr; the CLI does the same, the Python bindings turn them into
/// warnings.warn (zarrpp.ZarrppWarning).
#include <functional>
#include <string>

namespace zarrpp {

/// Gets one warning's message (one sentence saying what and how to fix it). Called on the thread
/// that made the operation, outside the library's locks on metadata. A handler that throws makes the
/// operation throw that exception after its change has been made (as Python's "-W error" does).
using WarningHandler = std::function<void(const std::string& message)>;

/// Installs `handler` for the whole process (nullptr: the default) and returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

/// Hands `message` to the current handler.
void warn(const std::string& message);

}  // namespace zarrpp
