// The DLPack bindings of bfly._bfly (dlpack.cpp): bfly's stream per device, arrays received through DLPack, and
// draws exported through DLPack, for JAX and other frameworks' GPU arrays.
#pragma once

#include <nanobind/nanobind.h>

void bind_dlpack(nanobind::module_& m);
