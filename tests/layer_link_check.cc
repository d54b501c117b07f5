// SPDX-License-Identifier: Apache-2.0
// The one source of the layer_link_check_* shared objects (tests/CMakeLists.txt): each links one folder's whole
// library with --no-undefined against only the folders docs/architecture.md §1 lets it use, so a call into a
// folder above or beside it is an undefined symbol and fails the build.
namespace urlguard_layer_link_check {
int Anchor() { return 0; }
}  // namespace urlguard_layer_link_check
