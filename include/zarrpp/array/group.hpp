#pragma once
/// @file
/// Moved to zarrpp/hierarchy/group.hpp (the hierarchy room). Kept so that code including this
/// path still builds.
#include "zarrpp/hierarchy/group.hpp"
