// Everything public in one include.
#pragma once
#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/mask.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/nadaraya_watson.hpp"
#include "attnlab/positional.hpp"
#include "attnlab/scoring.hpp"
#include "attnlab/shape.hpp"
#include "attnlab/softmax.hpp"
#include "attnlab/thread_pool.hpp"
