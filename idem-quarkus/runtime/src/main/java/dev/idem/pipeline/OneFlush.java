package dev.idem.pipeline;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.sqlclient.impl.Connection;
import io.vertx.sqlclient.impl.SocketConnectionBase;
import io.vertx.sqlclient.impl.SqlConnectionBase;
import io.vertx.sqlclient.impl.pool.SqlConnectionPool;

/**
 * The statements a transaction sends in one event-loop turn leave in one write. The Postgres
 * client flushes its socket after each statement, so BEGIN, a work's statements, the records and
 * the COMMIT, though sent without waiting for each other, made a system call each. Netty's
 * {@link FlushConsolidationHandler} holds the flushes of one turn (or of one read of the
 * connection's answers) and makes them one. Put on a pooled connection the first time a
 * transaction takes it; a client of another make is left as it is.
 */
final class OneFlush {

    private static final String NAME = "idem-one-flush";

    private OneFlush() {}

    static void on(SqlConnection conn) {
        if (!(conn.getDelegate() instanceof SqlConnectionBase<?> base)) {
            return;
        }
        Connection connection = base.unwrap();
        while (connection instanceof SqlConnectionPool.PooledConnection pooled) {
            connection = pooled.unwrap();
        }
        if (connection instanceof SocketConnectionBase socket) {
            ChannelPipeline pipeline = socket.socket().channelHandlerContext().pipeline();
            if (pipeline.get(NAME) == null) {
                pipeline.addFirst(NAME, new FlushConsolidationHandler(
                        FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
            }
        }
    }
}
