package dev.idem.ops;

import io.vertx.core.json.JsonObject;
import java.util.Map;

/** The counts an admin change answered with (records re-driven, events archived, lines applied…), for its audit entry. */
final class AuditResults {

    private AuditResults() {
    }

    /** The answer's numbers, nested ones named by their path ({@code findings.paidThereNotHere.count}); null when none. */
    static JsonObject counts(Object entity) {
        JsonObject answer;
        try {
            answer = entity instanceof JsonObject json ? json : entity instanceof String text ? new JsonObject(text) : null;
        } catch (RuntimeException notJson) {
            answer = null;
        }
        if (answer == null) {
            return null;
        }
        JsonObject counts = new JsonObject();
        collect(answer, "", counts, 0);
        return counts.isEmpty() ? null : counts;
    }

    private static void collect(JsonObject from, String prefix, JsonObject into, int depth) {
        for (Map.Entry<String, Object> member : from) {
            if (member.getValue() instanceof Number number) {
                into.put(prefix + member.getKey(), number);
            } else if (member.getValue() instanceof JsonObject nested && depth < 2) {
                collect(nested, prefix + member.getKey() + ".", into, depth + 1);
            }
        }
    }
}
