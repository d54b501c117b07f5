# SPDX-License-Identifier: Apache-2.0
# What the Node.js binding (node/, docs/node.md) compiles against, found once per build tree:
#   URLGUARD_NODE_INCLUDE_DIR      node_api.h, the headers of the Node.js that runs the addon (nodesource's nodejs
#                                  and Debian's libnode-dev put them in /usr/include/node)
#   URLGUARD_NODE_ADDON_API_DIR    napi.h and napi-inl.h of node-addon-api (header-only C++ wrappers over node_api.h)
# and sets _urlguard_node_possible when both are there. Included by the top-level CMakeLists.txt and by
# node/CMakeLists.txt when that is built on its own (node/scripts/build.js, an `npm install` of the package).
#
# Where node-addon-api comes from, in this order:
#   1. -DURLGUARD_NODE_ADDON_API_DIR=... (node/scripts/build.js passes the copy npm installed for package.json);
#   2. node_modules/node-addon-api under node/ (`npm install --ignore-scripts` in node/), or a global npm install;
#   3. Debian's package in /usr/share/nodejs/node-addon-api, where it is installable (with Debian's nodejs);
#   4. with URLGUARD_NODE_FETCH_ADDON_API (default: on when tests are built), Debian's package fetched into the
#      build tree with `apt-get download` (signed archive, pinned by the release) and unpacked with `dpkg-deb -x`:
#      headers only, nothing installed on the system. This is how CI gets it: Debian's node-addon-api depends on
#      Debian's nodejs, which conflicts with the nodesource nodejs that CI (and most Node users) run, so
#      `apt-get install node-addon-api` is impossible there. Once fetched, the headers stay in the build tree's
#      cache and the build works offline. The download is bounded (_fetch_seconds below) and tried once per
#      build tree: a failure is remembered (URLGUARD_NODE_FETCH_FAILED), so a re-configure does not go to the
#      network again; the binding is then left out with a message saying how to retry.
find_path(URLGUARD_NODE_INCLUDE_DIR node_api.h PATHS /usr/include/node /usr/local/include/node
          DOC "the Node.js headers (node_api.h) the Node.js binding is built against")
find_path(URLGUARD_NODE_ADDON_API_DIR napi.h
          PATHS ${CMAKE_CURRENT_LIST_DIR}/../node_modules/node-addon-api /usr/lib/node_modules/node-addon-api
                /usr/local/lib/node_modules/node-addon-api /usr/share/nodejs/node-addon-api
          NO_DEFAULT_PATH DOC "node-addon-api's headers (napi.h) for the Node.js binding")
if(NOT DEFINED URLGUARD_BUILD_TESTS)
  set(URLGUARD_BUILD_TESTS OFF)
endif()
option(URLGUARD_NODE_FETCH_ADDON_API
       "when node-addon-api is not found, fetch Debian's package's headers into the build tree (apt-get download)"
       ${URLGUARD_BUILD_TESTS})
if(URLGUARD_NODE_INCLUDE_DIR AND NOT URLGUARD_NODE_ADDON_API_DIR AND URLGUARD_NODE_FETCH_ADDON_API
   AND NOT URLGUARD_NODE_FETCH_FAILED)
  set(_fetch ${CMAKE_BINARY_DIR}/_deps/node-addon-api)
  set(_fetch_seconds 120)  # the whole download: a configure never waits longer on the network
  file(REMOVE_RECURSE ${_fetch})
  file(MAKE_DIRECTORY ${_fetch})
  execute_process(COMMAND apt-get download node-addon-api WORKING_DIRECTORY ${_fetch} TIMEOUT ${_fetch_seconds}
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
  file(GLOB _deb ${_fetch}/node-addon-api_*.deb)
  if(_rc EQUAL 0 AND _deb)
    execute_process(COMMAND dpkg-deb -x ${_deb} ${_fetch}/root RESULT_VARIABLE _rc)
  endif()
  if(_rc EQUAL 0 AND EXISTS ${_fetch}/root/usr/share/nodejs/node-addon-api/napi.h)
    set(URLGUARD_NODE_ADDON_API_DIR ${_fetch}/root/usr/share/nodejs/node-addon-api CACHE PATH
        "node-addon-api's headers (napi.h) for the Node.js binding" FORCE)
    message(STATUS "node-addon-api: Debian's package unpacked into ${URLGUARD_NODE_ADDON_API_DIR}")
  else()
    string(STRIP "${_err}" _err)
    set(URLGUARD_NODE_FETCH_FAILED ON CACHE INTERNAL "apt-get download node-addon-api failed in this build tree")
    message(STATUS "node-addon-api: apt-get download node-addon-api failed (${_rc}): ${_err}; the Node.js binding "
                   "is not built. To retry: -UURLGUARD_NODE_FETCH_FAILED; or pass -DURLGUARD_NODE_ADDON_API_DIR=...")
  endif()
endif()
set(_urlguard_node_possible OFF)
if(URLGUARD_NODE_INCLUDE_DIR AND URLGUARD_NODE_ADDON_API_DIR)
  set(_urlguard_node_possible ON)
endif()
