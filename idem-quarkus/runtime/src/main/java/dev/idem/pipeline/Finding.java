package dev.idem.pipeline;

import java.util.List;

/** One reconciliation check over the records: how many offenders, and a few of them ({@code scope:key}). */
public record Finding(String check, long count, List<String> samples) {}
