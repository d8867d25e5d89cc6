#pragma once
// Matrix Market input and output: dense Views, the CRS type, HM and TLR matrices, .gz files.

#include <nearsparse/io/diagonal.hpp>
#include <nearsparse/io/matrix_market.hpp>
#include <nearsparse/io/tlr.hpp>
#include <nearsparse/io/types.hpp>
