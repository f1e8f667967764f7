#pragma once
/// @file
/// Moved to zarrpp/testing/store_doubles.hpp (the zarrpp::testing library: test doubles are not
/// part of libzarrpp). Kept so that code including this path still builds.
#include "zarrpp/testing/store_doubles.hpp"
