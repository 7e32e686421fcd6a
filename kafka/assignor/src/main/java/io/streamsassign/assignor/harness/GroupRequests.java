package io.streamsassign.assignor.harness;

import java.util.Map;

/** Streams-group (KIP-1357) requests of the harness. */
final class GroupRequests {
    private GroupRequests() { }

    static Object answer(Map<String, Object> group) {
        throw new UnsupportedOperationException("streams-group requests are not served yet");
    }
}
