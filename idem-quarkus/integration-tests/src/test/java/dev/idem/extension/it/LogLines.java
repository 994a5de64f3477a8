package dev.idem.extension.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jboss.logmanager.ExtLogRecord;

/** What one logger of the application says while a test runs, each line as "LEVEL message". */
final class LogLines extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private LogLines(String name) {
        this.logger = Logger.getLogger(name);
        logger.addHandler(this);
    }

    static LogLines of(Class<?> loggerClass) {
        return new LogLines(loggerClass.getName());
    }

    static LogLines of(String loggerName) {
        return new LogLines(loggerName);
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    List<String> startingWith(String prefix) {
        return lines.stream().filter(line -> line.startsWith(prefix)).toList();
    }

    @Override
    public void publish(LogRecord record) {
        String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
        lines.add(record.getLevel() + " " + message);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
