#pragma once
// Diagonal storage: the HM and CDM formats, conversions to and from dense, COO and CSR, banded
// and structured-sparse products (plain and transposed), and matrix-(multi)vector products.

#include <nearsparse/core/device_memory.hpp>
#include <nearsparse/diagonal/cdm_conversions.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/cdm_product.hpp>
#include <nearsparse/diagonal/coo_conversions.hpp>
#include <nearsparse/diagonal/crs_conversions.hpp>
#include <nearsparse/diagonal/dense_conversions.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/hm_product.hpp>
#include <nearsparse/diagonal/operation.hpp>
#include <nearsparse/diagonal/spmv.hpp>
#include <nearsparse/diagonal/structured_matrices.hpp>
