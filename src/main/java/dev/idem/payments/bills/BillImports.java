package dev.idem.payments.bills;

import dev.idem.orders.Order;
import dev.idem.orders.OrderRepository;
import dev.idem.orders.OrderStatus;
import dev.idem.orders.PaymentGateway;
import dev.idem.payments.GatewayTraces;
import dev.idem.payments.PaymentService;
import dev.idem.pipeline.IdempotencyPipeline;
import dev.idem.pipeline.Outcome;
import dev.idem.support.Waits;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.All;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A gateway's daily bill imported: read (fetched, or the file given), every payment line applied
 * by {@link PaymentService} as that gateway's notification of it would be (same key, same
 * fingerprint: a payment already recorded is a duplicate, importing a bill again applies
 * nothing), then the bill compared with the orders:
 * <ul>
 *   <li>{@code paidThereNotHere}: paid at the gateway, not paid here before this import (repaired:
 *       applied now, once) or not payable here (no such order, closed, paid by another trade);</li>
 *   <li>{@code paidHereNotThere}: orders paid here through this gateway that day that the bill does
 *       not list (an anomaly, alerted: money recorded that the gateway did not take);</li>
 *   <li>{@code amountMismatch}: the bill's amount is not the order's (the payment was not applied);</li>
 *   <li>{@code refunds}: listed, never applied.</li>
 * </ul>
 * The report is kept as the day's last import.
 */
@ApplicationScoped
public class BillImports {

    /** Payment lines per transaction: one Redis call of pre-checks and one of DONE marks each. */
    static final int CHUNK = 500;
    /**
     * Transactions at once: each spends most of its time waiting for its statements' round trips,
     * so a few in parallel keep the database busy without taking the pool from the API.
     */
    static final int PARALLEL = 4;
    static final int SAMPLES = 20;
    /** A line whose key another delivery holds is tried again this many times, this far apart. */
    static final int IN_FLIGHT_ROUNDS = 25;
    static final Duration IN_FLIGHT_WAIT = Duration.ofMillis(200);
    /** A chunk whose transaction failed for want of the database is tried again, up to this many times. */
    static final int ATTEMPTS = 3;

    /** What came of an import: the report, or why there is none. */
    public sealed interface Result {
        record Imported(JsonObject report) implements Result {}

        /** Nothing applied, or (unavailable) what was applied stays and importing again finishes it. */
        record NotImported(BillRead why) implements Result {}
    }

    private final Map<PaymentGateway, GatewayBills> gateways = new HashMap<>();
    private final PaymentService payments;
    private final IdempotencyPipeline pipeline;
    private final OrderRepository orders;
    private final BillReports reports;
    private final Pool pool;
    private final Vertx vertx;
    private final MeterRegistry registry;
    private final Clock clock;
    private final GatewayTraces traces;

    BillImports(@All List<GatewayBills> bills, PaymentService payments, IdempotencyPipeline pipeline,
                OrderRepository orders, BillReports reports, Pool pool, Vertx vertx, MeterRegistry registry, Clock clock,
                GatewayTraces traces) {
        this.traces = traces;
        bills.forEach(gateway -> gateways.put(gateway.gateway(), gateway));
        this.payments = payments;
        this.pipeline = pipeline;
        this.orders = orders;
        this.reports = reports;
        this.pool = pool;
        this.vertx = vertx;
        this.registry = registry;
        this.clock = clock;
    }

    /** The gateway named {@code id}, when it is on. */
    public Optional<GatewayBills> gateway(String id) {
        return PaymentGateway.named(id).map(gateways::get).filter(GatewayBills::on);
    }

    public Uni<Optional<JsonObject>> report(GatewayBills gateway, LocalDate date) {
        return reports.find(pool, gateway.gateway(), date);
    }

    public Uni<List<JsonObject>> latest(int limit) {
        return reports.latest(pool, limit);
    }

    /** {@code file} empty: fetched from the gateway. */
    public Uni<Result> importBill(GatewayBills gateway, LocalDate date, Optional<byte[]> file, Optional<String> hash) {
        return traces.traced("idem bill import", gateway.gateway(), "idem.bill.result",
                result -> result instanceof Result.Imported ? "imported" : "not_imported",
                () -> importNow(gateway, date, file, hash));
    }

    private Uni<Result> importNow(GatewayBills gateway, LocalDate date, Optional<byte[]> file, Optional<String> hash) {
        Uni<BillRead> read = file.isPresent()
                ? Uni.createFrom().item(new BillRead.Downloaded(file.get(), hash))
                : gateway.fetch(date);
        return read.chain(fetched -> fetched instanceof BillRead.Downloaded downloaded
                        ? offLoop(() -> read(gateway, date, downloaded))
                        : Uni.createFrom().item(fetched))
                .chain(bill -> bill instanceof BillRead.Valid valid
                        ? apply(valid.bill(), file.isPresent() ? "file" : "gateway").map(Result.Imported::new)
                        : Uni.createFrom().item(new Result.NotImported(bill)));
    }

    /** The file, once it matches the hash the gateway gave with it (if it gave one). */
    private static BillRead read(GatewayBills gateway, LocalDate date, BillRead.Downloaded file) {
        Optional<String> mismatch = file.hash().flatMap(declared -> BillText.hashMismatch(declared, file.file()));
        return mismatch.<BillRead>map(BillRead.Invalid::new).orElseGet(() -> gateway.read(date, file.file()));
    }

    /** A file of many megabytes is read on a worker thread, and the rest goes on on the caller's context. */
    private <T> Uni<T> offLoop(java.util.concurrent.Callable<T> work) {
        return Uni.createFrom().completionStage(() -> vertx.executeBlocking(work, false).toCompletionStage());
    }

    private Uni<JsonObject> apply(Bill bill, String source) {
        Tally tally = new Tally(bill);
        List<Bill.Line> payments = bill.lines().stream().filter(l -> l.kind() == Bill.Kind.PAYMENT).toList();
        List<List<Bill.Line>> chunks = new ArrayList<>();
        for (int i = 0; i < payments.size(); i += CHUNK) {
            chunks.add(payments.subList(i, Math.min(payments.size(), i + CHUNK)));
        }
        return Multi.createFrom().iterable(chunks)
                .onItem().transformToUni(chunk -> applyChunk(bill.gateway(), chunk, tally, 1)
                        .chain(() -> compare(chunk, tally)))
                .merge(PARALLEL)
                .collect().last()
                .chain(() -> orders.paidVia(pool, bill.gateway(), bill.from(), bill.until()))
                .chain(paid -> {
                    Instant importedAt = clock.instant();
                    JsonObject report = tally.report(paid, source, importedAt);
                    return reports.save(pool, bill.gateway(), bill.date(), importedAt, report).replaceWith(report);
                })
                .invoke(report -> alert(bill, report));
    }

    /** The chunk's payments through the pipeline; lines another delivery holds, again after a moment. */
    private Uni<Void> applyChunk(PaymentGateway gateway, List<Bill.Line> lines, Tally tally, int round) {
        List<Bill.Line> waiting = new ArrayList<>();
        return transact(gateway, lines, 1).chain(outcomes -> {
            for (int i = 0; i < outcomes.size(); i++) {
                Outcome outcome = outcomes.get(i);
                if (outcome instanceof Outcome.InFlight && round < IN_FLIGHT_ROUNDS) {
                    waiting.add(lines.get(i));
                } else {
                    tally.outcome(lines.get(i), outcome);
                }
            }
            return waiting.isEmpty() ? Uni.createFrom().voidItem()
                    : after(IN_FLIGHT_WAIT).chain(() -> applyChunk(gateway, waiting, tally, round + 1));
        });
    }

    private Uni<List<Outcome>> transact(PaymentGateway gateway, List<Bill.Line> lines, int attempt) {
        return payments.applyAll(lines.stream().map(Bill.Line::payment).toList(), gateway)
                .onFailure(failure -> pipeline.isTransient(failure) && attempt < ATTEMPTS)
                .recoverWithUni(failure -> after(Duration.ofSeconds(attempt)).chain(() -> transact(gateway, lines, attempt + 1)));
    }

    /** The chunk's lines against their orders, as they are once the chunk was applied. */
    private Uni<Void> compare(List<Bill.Line> lines, Tally tally) {
        return orders.findAll(pool, lines.stream().map(Bill.Line::orderId).distinct().toList())
                .invoke(found -> {
                    Map<String, Order> byId = new HashMap<>();
                    found.forEach(order -> byId.put(order.orderId(), order));
                    lines.forEach(line -> tally.compare(line, byId.get(line.orderId())));
                })
                .replaceWithVoid();
    }

    private Uni<Void> after(Duration wait) {
        return Waits.after(vertx, wait.toMillis());
    }

    private void alert(Bill bill, JsonObject report) {
        JsonObject findings = report.getJsonObject("findings");
        for (String finding : findings.fieldNames()) {
            long count = findings.getJsonObject(finding).getLong("count");
            Counter.builder("idem.gateway.bill.findings")
                    .description("Bill lines and orders that did not match, by gateway and finding, counted at each import")
                    .tag("gateway", bill.gateway().id()).tag("finding", finding)
                    .register(registry).increment(count);
        }
        long hereNotThere = findings.getJsonObject("paidHereNotThere").getLong("count");
        long mismatch = findings.getJsonObject("amountMismatch").getLong("count");
        if (hereNotThere > 0 || mismatch > 0) {
            Log.errorf("ALERT %s bill of %s: %d orders paid here are not in the bill, %d amounts differ "
                    + "(GET /admin/reconciliation/gateways/%s/bills/%s lists them)", bill.gateway().id(), bill.date(),
                    hereNotThere, mismatch, bill.gateway().id(), bill.date());
        }
    }

    /** One import's counts and findings, filled in as its chunks are applied (several at once). */
    private static final class Tally {
        private final Bill bill;
        private final Set<String> inBill = new HashSet<>();
        private final Set<String> applied = new HashSet<>();
        private long appliedCount;
        private long duplicates;
        private final Finding thereNotHere = new Finding();
        private final Finding mismatch = new Finding();
        private final Finding refunds = new Finding();

        Tally(Bill bill) {
            this.bill = bill;
            for (Bill.Line line : bill.lines()) {
                if (line.kind() == Bill.Kind.PAYMENT) {
                    inBill.add(line.orderId());
                } else if (line.kind() == Bill.Kind.REFUND) {
                    refunds.add(new JsonObject().put("orderId", line.orderId()).put("tradeNo", line.tradeNo())
                            .put("refundNo", line.refundNo()).put("refundCents", line.refundCents())
                            .put("at", line.at().toString()));
                }
            }
        }

        synchronized void outcome(Bill.Line line, Outcome outcome) {
            if (outcome instanceof Outcome.Processed) {
                appliedCount++;
                applied.add(line.tradeNo() + ":" + line.orderId());
            } else if (outcome instanceof Outcome.Duplicate) {
                duplicates++;
            }
        }

        /** {@code order} as it is once the line was applied; null when there is no such order. */
        synchronized void compare(Bill.Line line, Order order) {
            JsonObject sample = new JsonObject().put("orderId", line.orderId()).put("tradeNo", line.tradeNo())
                    .put("amountCents", line.amountCents()).put("paidAt", line.at().toString());
            if (order == null) {
                thereNotHere.add(sample.put("repaired", false).put("reason", "ORDER_NOT_FOUND"));
            } else if (order.amountCents() != line.amountCents()) {
                mismatch.add(sample.put("orderAmountCents", order.amountCents()).put("orderStatus", order.status().name()));
            } else if (applied.remove(line.tradeNo() + ":" + line.orderId())) {
                thereNotHere.add(sample.put("repaired", true));
            } else if (order.status() != OrderStatus.PAID) {
                thereNotHere.add(sample.put("repaired", false).put("reason", "ORDER_" + order.status().name()));
            } else if (!line.tradeNo().equals(order.tradeNo())) {
                thereNotHere.add(sample.put("repaired", false).put("reason", "PAID_BY_ANOTHER_TRADE")
                        .put("orderTradeNo", order.tradeNo()));
            }
        }

        synchronized JsonObject report(List<OrderRepository.Paid> paidHere, String source, Instant importedAt) {
            Finding hereNotThere = new Finding();
            for (OrderRepository.Paid paid : paidHere) {
                if (!inBill.contains(paid.orderId())) {
                    hereNotThere.add(new JsonObject().put("orderId", paid.orderId()).put("tradeNo", paid.tradeNo())
                            .put("amountCents", paid.amountCents()).put("paidAt", paid.paidAt().toString()));
                }
            }
            return new JsonObject()
                    .put("gateway", bill.gateway().id())
                    .put("date", bill.date().toString())
                    .put("source", source)
                    .put("importedAt", importedAt.toString())
                    .put("lines", bill.lines().size())
                    .put("applied", appliedCount)
                    .put("duplicates", duplicates)
                    .put("findings", new JsonObject()
                            .put("paidThereNotHere", thereNotHere.toJson())
                            .put("paidHereNotThere", hereNotThere.toJson())
                            .put("amountMismatch", mismatch.toJson())
                            .put("refunds", refunds.toJson()));
        }
    }

    /** A finding's count and its first samples. */
    private static final class Finding {
        private long count;
        private final JsonArray samples = new JsonArray();

        void add(JsonObject sample) {
            if (count++ < SAMPLES) {
                samples.add(sample);
            }
        }

        JsonObject toJson() {
            return new JsonObject().put("count", count).put("samples", samples);
        }
    }
}
