#pragma once
/// @file
/// Moved to zarrpp/select/selection.hpp (the selection room). Kept so that code including this
/// path still builds.
#include "zarrpp/select/selection.hpp"
