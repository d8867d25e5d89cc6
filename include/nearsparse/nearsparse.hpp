#pragma once
// Umbrella header: everything public in nearsparse.

#include <nearsparse/config.hpp>
#include <nearsparse/core/configuration.hpp>
#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/execution_spaces.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/matrix_norms.hpp>
#include <nearsparse/core/random.hpp>
#include <nearsparse/core/tile_grid.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/diagonal.hpp>
#include <nearsparse/io.hpp>
#include <nearsparse/kpm.hpp>
#include <nearsparse/spamm.hpp>
#include <nearsparse/tlr.hpp>
