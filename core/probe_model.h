// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Expected filter probes per URL in each layer, for sizing filters (publish/list_builder.h builds to them;
// `urlguard plan` reports them). Measured on bench/'s browsing corpus (1 M generated URLs: 80% https, 70% with
// "www." or one more subdomain, 0-7 path segments, a query on 35%): 1.86 whole-host expressions (domain layer)
// and 4.28 others (url layer) per URL. These constants keep a ~35% margin over that, so URLs a little deeper than
// average still meet the target. An IP-host URL probes its ip layer once per prefix length present, so that layer
// is sized with its own prefix-length count.
#ifndef URLGUARD_CORE_PROBE_MODEL_H_
#define URLGUARD_CORE_PROBE_MODEL_H_

namespace urlguard {

constexpr double kExpectedDomainProbes = 2.5;
constexpr double kExpectedUrlProbes = 6.0;

}  // namespace urlguard

#endif  // URLGUARD_CORE_PROBE_MODEL_H_
