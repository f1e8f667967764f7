#pragma once
/// @file
/// Moved to zarrpp/view/picture.hpp (the pictures are the zarrpp::view library, which links
/// libpng; link zarrpp::view to use them). Kept so that code including this path still builds.
#include "zarrpp/view/picture.hpp"
