package dev.idem.extension.it;

import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** The application's exception mapping, which a work's exception reaches as any method's does. */
public class BrokenMapper {

    @ServerExceptionMapper
    public Response broken(Bug.Broken failure) {
        return Problems.problem(500, "BROKEN", failure.getMessage());
    }
}
