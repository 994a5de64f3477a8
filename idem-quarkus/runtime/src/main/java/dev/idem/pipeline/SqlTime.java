package dev.idem.pipeline;

import io.vertx.mutiny.sqlclient.Row;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/** Instants in and out of {@code timestamptz} columns, which the reactive client maps to OffsetDateTime. */
public final class SqlTime {

    private SqlTime() {}

    /** {@code instant} as a {@code timestamptz} parameter (null stays null). */
    public static OffsetDateTime ts(Instant instant) {
        return instant == null ? null : OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    /** The {@code timestamptz} {@code column} of {@code row} as an Instant (null stays null). */
    public static Instant instant(Row row, String column) {
        OffsetDateTime time = row.getOffsetDateTime(column);
        return time == null ? null : time.toInstant();
    }
}
