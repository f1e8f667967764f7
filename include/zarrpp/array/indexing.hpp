#pragma once
/// @file
/// Moved to zarrpp/select/indexing.hpp (the selection room). Kept so that code including this
/// path still builds.
#include "zarrpp/select/indexing.hpp"
