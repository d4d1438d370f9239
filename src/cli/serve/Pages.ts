import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
export const layer = (_storage: string) => HttpRouter.add("GET", "/", HttpServerResponse.text("parley"))
