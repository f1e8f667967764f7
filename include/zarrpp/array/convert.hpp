#pragma once
/// @file
/// Moved to zarrpp/hierarchy/convert.hpp (the hierarchy room). Kept so that code including this
/// path still builds.
#include "zarrpp/hierarchy/convert.hpp"
