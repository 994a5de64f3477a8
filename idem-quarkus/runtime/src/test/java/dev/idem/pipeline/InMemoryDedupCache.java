package dev.idem.pipeline;

import io.smallrye.mutiny.Uni;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A {@link DedupCache} in memory that behaves like {@code SET key PROCESSING NX GET}: the first
 * pre-check of a key claims it, later ones find PROCESSING, and DONE once marked. A test may
 * program the answer of a key instead, or take the whole cache down (every answer Unavailable, as
 * when Redis fails or is slower than its budget). Every markDone is recorded, with whether the
 * store had the key's record committed at that moment. Given a clock and the configuration, a key
 * expires as in Redis once its scope's TTL has passed.
 */
final class InMemoryDedupCache implements DedupCache {

    /** One markDone: the key, its result, and whether its record was committed when Redis heard it. */
    record Marked(IdemRequest request, String result, boolean committedBefore) {}

    private final Map<String, PreCheck> values = new HashMap<>();
    private final Map<String, Instant> expiries = new HashMap<>();
    private final Map<String, PreCheck> programmed = new HashMap<>();
    private final List<Marked> marked = new ArrayList<>();
    private final List<IdemRequest> preChecked = new ArrayList<>();
    private Predicate<IdemRequest> committed = request -> false;
    private boolean down;
    private Clock clock;
    private PipelineConfig config;

    /** How the cache tells whether the store has the key's record committed (the store under test). */
    synchronized InMemoryDedupCache witnessing(Predicate<IdemRequest> committed) {
        this.committed = committed;
        return this;
    }

    /** Keys expire once {@code clock} passes their scope's {@code redis-ttl} after they were written. */
    synchronized InMemoryDedupCache expiring(Clock clock, PipelineConfig config) {
        this.clock = clock;
        this.config = config;
        return this;
    }

    /** Redis lost every key (FLUSHALL, a failover that lost writes). */
    synchronized void flush() {
        values.clear();
        expiries.clear();
    }

    /** Every later pre-check of the key answers {@code answer}. */
    synchronized void answer(IdemRequest request, PreCheck answer) {
        programmed.put(DedupStore.batchKey(request), answer);
    }

    /** Redis failed or is too slow: every pre-check answers Unavailable and nothing is kept. */
    synchronized void goDown() {
        down = true;
    }

    /** Redis answers again, with the keys it held before (and still holds, if they did not expire). */
    synchronized void comeBack() {
        down = false;
    }

    synchronized List<Marked> marked() {
        return new ArrayList<>(marked);
    }

    synchronized List<IdemRequest> preChecked() {
        return new ArrayList<>(preChecked);
    }

    @Override
    public synchronized Uni<List<PreCheck>> preCheckAll(List<IdemRequest> requests) {
        preChecked.addAll(requests);
        return Uni.createFrom().item(requests.stream().map(this::answerFor).toList());
    }

    private PreCheck answerFor(IdemRequest request) {
        String key = DedupStore.batchKey(request);
        if (down) {
            return new PreCheck.Unavailable();
        }
        PreCheck answer = programmed.get(key);
        if (answer != null) {
            return answer;
        }
        expire(key);
        PreCheck previous = values.putIfAbsent(key, new PreCheck.Processing());
        if (previous == null) {
            written(request, key);
        }
        return previous == null ? new PreCheck.Claimed() : previous;
    }

    private void expire(String key) {
        Instant expiry = expiries.get(key);
        if (expiry != null && !clock.instant().isBefore(expiry)) {
            values.remove(key);
            expiries.remove(key);
        }
    }

    private void written(IdemRequest request, String key) {
        if (clock != null) {
            expiries.put(key, clock.instant().plus(config.redisTtl(request.scope())));
        }
    }

    private void markDone(IdemRequest request, String result) {
        marked.add(new Marked(request, result, committed.test(request)));
        if (!down) {
            String key = DedupStore.batchKey(request);
            values.put(key, new PreCheck.Done(request.fingerprint(), JsonText.decode(result)));
            written(request, key);
        }
    }

    @Override
    public synchronized Uni<Void> markDoneAll(List<IdemRequest> requests, List<String> results) {
        for (int i = 0; i < requests.size(); i++) {
            markDone(requests.get(i), results.get(i));
        }
        return Uni.createFrom().voidItem();
    }

    @Override
    public synchronized Uni<Void> release(List<IdemRequest> requests) {
        for (IdemRequest request : requests) {
            values.remove(DedupStore.batchKey(request), new PreCheck.Processing());
        }
        return Uni.createFrom().voidItem();
    }

    @Override
    public synchronized Uni<Optional<String>> peek(String scope, String key) {
        expire(DedupStore.batchKey(scope, key));
        return Uni.createFrom().item(down ? Optional.empty()
                : Optional.ofNullable(values.get(DedupStore.batchKey(scope, key))).map(Object::toString));
    }

    @Override
    public synchronized Uni<List<Mark>> doneMarks(int limit) {
        if (down) {
            return Uni.createFrom().failure(new IllegalStateException("the cache is down"));
        }
        List.copyOf(values.keySet()).forEach(this::expire);
        return Uni.createFrom().item(values.entrySet().stream()
                .filter(e -> e.getValue() instanceof PreCheck.Done)
                .limit(limit)
                .map(e -> new Mark(e.getKey().substring(0, e.getKey().indexOf('\n')),
                        e.getKey().substring(e.getKey().indexOf('\n') + 1)))
                .toList());
    }

    @Override
    public synchronized Uni<Void> forget(String scope, String key) {
        values.remove(DedupStore.batchKey(scope, key));
        expiries.remove(DedupStore.batchKey(scope, key));
        return Uni.createFrom().voidItem();
    }
}
