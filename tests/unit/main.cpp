// The Catch2 main, in its own translation unit (it compiles slowly).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
