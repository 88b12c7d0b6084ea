// Internal: the calls by which the emulated runtime reports what it creates, and when the host waits
// for the device, to the introspection of baton_emu/introspection.h (tests/emu/runtime/introspection.cc).
#pragma once

namespace baton_emu {

void count_stream_created();
void count_event_created();
void count_pinned_allocation();
// A call blocked the host until device work completed (the fields of HostSyncCounts).
enum class HostSync { stream, event, device, copy };
void count_host_sync(HostSync kind);
// A call needed `device`'s primary context: it exists from now on.
void use_primary_context(int device);

}  // namespace baton_emu
