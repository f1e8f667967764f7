#pragma once
// A pause at a named point, for tests that must force an interleaving of processes (another
// process acting while this one stands between two steps). Off unless ZARRPP_TEST_PAUSE is set to
// "POINT:DIR": reaching POINT, the process creates DIR/POINT.PID and waits until that file is
// removed (at most 120 s). Points: "growth.read" (a growth read zarr.json under its lock and has
// not written yet), "zip.commit" (a zip commit wrote its new archive and has not renamed it).
namespace zarrpp::detail {

void test_pause(const char* point) noexcept;

}  // namespace zarrpp::detail
