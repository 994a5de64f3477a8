package dev.idem.tokens;

import dev.idem.web.ApiConfig;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.datasource.value.ReactiveValueCommands;
import io.quarkus.redis.datasource.value.SetArgs;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

/**
 * One-time submit tokens in Redis, bound to the user they were issued to. Consuming is one atomic
 * script (check the owner, remember the remaining TTL, delete), never a read followed by a delete,
 * so a hundred concurrent submits with one token consume it once. Tokens need Redis: when it is
 * unavailable the caller is told so rather than let through.
 */
@ApplicationScoped
public class TokenStore {

    /** Returns the remaining TTL in ms when the caller owned the token and it is now consumed, else -1. */
    private static final String CONSUME = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              local ttl = redis.call('PTTL', KEYS[1])
              redis.call('DEL', KEYS[1])
              if ttl < 1 then ttl = 1 end
              return ttl
            end
            return -1""";

    /** What consuming a token found. */
    public sealed interface Consumption {
        /** The token was the caller's and is gone now; {@code remaining} is what it had left. */
        record Consumed(Duration remaining) implements Consumption {}

        /** Unknown, expired, used, or another user's. */
        record Invalid() implements Consumption {}

        record StoreUnavailable() implements Consumption {}
    }

    /** Seeded at run time: a static one would be created, seed and all, while a native image is built. */
    private final SecureRandom random = new SecureRandom();

    private final ReactiveRedisDataSource redis;
    private final ReactiveValueCommands<String, String> values;
    private final ApiConfig.Token config;

    TokenStore(ReactiveRedisDataSource redis, ApiConfig config) {
        this.redis = redis;
        this.values = redis.value(String.class);
        this.config = config.token();
    }

    /** A new token for {@code userId}, or empty when Redis cannot take it. */
    public Uni<Optional<String>> issue(String userId) {
        byte[] bytes = new byte[18];
        random.nextBytes(bytes);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return values.set(key(token), userId, new SetArgs().px(config.ttl()))
                .map(ok -> Optional.of(token))
                .onFailure().recoverWithItem(Optional.empty());
    }

    public Uni<Consumption> consume(String token, String userId) {
        return redis.execute("EVAL", CONSUME, "1", key(token), userId)
                .map(TokenStore::consumption)
                .onFailure().recoverWithItem(new Consumption.StoreUnavailable());
    }

    /** Gives a consumed token back (the order could not be stored); a no-op if it somehow exists. */
    public Uni<Void> restore(String token, String userId, Duration remaining) {
        return values.set(key(token), userId, new SetArgs().nx().px(remaining))
                .onFailure().recoverWithNull();
    }

    public Duration ttl() {
        return config.ttl();
    }

    private static Consumption consumption(Response reply) {
        long remaining = reply == null ? -1 : reply.toLong();
        return remaining > 0 ? new Consumption.Consumed(Duration.ofMillis(remaining)) : new Consumption.Invalid();
    }

    private static String key(String token) {
        return "idem:token:" + token;
    }
}
